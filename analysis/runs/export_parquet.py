"""An analysis run's results as a Hugging Face dataset (evalhub/hf).

`run` has one row: what was analysed, the parameters, the library versions, the inputs'
digest and the whole result (JSON text), so the dataset reproduces the run's claim. Every
list of records inside the result (a ranking's systems, pairwise comparisons, per-label
agreement...) is also a table of its own, named by its place in the result
(`ranking.systems` becomes `ranking__systems`), so the figures load as columns without
reading the JSON. A run's result is stored whole, so it is read whole; its tables are small.
"""

import json
import re

from evalhub.hf.bundle import Table
from evalhub.hf.card import CardText

from ..models import AnalysisRun

MAX_TABLES = 50  # a result with more lists of records still has them all in `run.result`


def subject(run: AnalysisRun) -> tuple[str, str]:
    if run.tournament_id:
        return "tournament", run.tournament.slug
    if run.campaign_id:
        return "campaign", run.campaign.slug
    if run.study_id:
        return "study", run.study.slug
    return "arena", run.judge_run.arena.slug


def record_lists(value, path=()):
    """(path, records) for every non-empty list of dicts in the result, outermost first."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from record_lists(item, (*path, str(key)))
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        yield path, value


def _name(path: tuple[str, ...]) -> str:
    return re.sub(r"[^A-Za-z0-9_]+", "_", "__".join(path)).strip("_")[:80] or "records"


def _uniform(records: list[dict]) -> list[dict]:
    """Every record with every key of the list (a key some records lack is None there)."""
    keys = list(dict.fromkeys(key for record in records for key in record))
    return [{key: record.get(key) for key in keys} for record in records]


def run_row(run: AnalysisRun) -> dict:
    kind, slug = subject(run)
    return {
        "run": run.pk,
        "subject_kind": kind,
        "subject": slug,
        "judge_run": run.judge_run_id,
        "created": run.created.isoformat(),
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "inputs_digest": run.inputs_digest,
        "parameters": json.dumps(run.parameters, ensure_ascii=False),
        "versions": json.dumps(run.versions, ensure_ascii=False),
        "result": json.dumps(run.result, ensure_ascii=False),
    }


def tables(run: AnalysisRun) -> list[Table]:
    made = [
        Table(
            "run",
            lambda: [run_row(run)],
            about="The run: its subject, parameters, library versions, the digest of its "
            "inputs and the whole result (JSON text).",
        )
    ]
    names = {"run"}
    for path, records in record_lists(run.result or {}):
        name = _name(path)
        if name in names or len(made) > MAX_TABLES:
            continue
        names.add(name)
        made.append(
            Table(
                name,
                lambda records=records: _uniform(records),
                about=f"`{'.'.join(path)}` of the result, one row per entry.",
            )
        )
    return made


def card_text(run: AnalysisRun, *, license: str, citation: str) -> CardText:
    kind, slug = subject(run)
    return CardText(
        title=f"Analysis run {run.pk} of the {kind} {slug}",
        description=f'The results of EvalHub\'s analysis run {run.pk} of the {kind} "{slug}", '
        "with the parameters and library versions that produced them.",
        license=license,
        citation=citation,
    )
