"""A campaign's judgments as a Hugging Face dataset (evalhub/hf): the JSONL export's rows,
one Parquet column per field, nested values as JSON text.

The rows are `export.export_rows`' own, so the Parquet export carries exactly what the
JSONL one does and no more: the platforms' worker and submission ids for staff only, the
item's role on every row, never a gold answer (a worker's answer to a gold check is a
judgment like any other, marked `role: gold`).
"""

from evalhub.hf.bundle import Table
from evalhub.hf.card import CardText

from . import export
from .models import Campaign


def tables(campaign: Campaign, *, platform_ids: bool = False) -> list[Table]:
    return [
        Table(
            "judgments",
            lambda: export.export_rows(campaign, platform_ids=platform_ids),
            about=f"One row per judgment, the {campaign.kind.label} task kind's fields; "
            "`role` says whether the item was a task, a gold check or training.",
        )
    ]


def card_text(campaign: Campaign, *, license: str, citation: str) -> CardText:
    description = (
        f'Crowdsourced judgments of the EvalHub campaign "{campaign.title}" '
        f"({campaign.kind.label}, {campaign.redundancy} judgments per item)."
    )
    if campaign.study_id:
        description += f' Part of the study "{campaign.study.name}".'
    return CardText(
        title=campaign.title,
        description=description,
        license=license,
        citation=citation,
        source=campaign.get_absolute_url(),
    )
