"""The dataset card: README.md with the YAML front matter the Hugging Face Hub reads.

The front matter follows the Hub's dataset card specification (huggingface/hub-docs,
datasetcard.md): `license` (an identifier of the Hub's list), `pretty_name`, `configs` (one
per table, each with its `data_files`, so `load_dataset(repo, "judgments")` finds it once
pushed) and `dataset_info` (each table's features in the `datasets` YAML form and its row
count). Strings are written as JSON strings, which YAML reads as they are, so no YAML
library is needed to write it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..errors import Problem, UserInputError
from .arrow import pa

# The Hub's licence identifiers a study is most likely published under
# (https://huggingface.co/docs/hub/repositories-licenses); "other" for any other licence,
# named in the citation or description, "unknown" when the researcher has not chosen.
LICENSES = (
    "unknown",
    "other",
    "cc-by-4.0",
    "cc-by-sa-4.0",
    "cc-by-nc-4.0",
    "cc-by-nc-sa-4.0",
    "cc-by-nd-4.0",
    "cc0-1.0",
    "odc-by",
    "odbl",
    "pddl",
    "cdla-permissive-2.0",
    "cdla-sharing-1.0",
    "apache-2.0",
    "mit",
)
CITATION_CHARS = 5000


@dataclass(frozen=True)
class CardText:
    """What the researcher and the study say about the dataset."""

    title: str
    description: str = ""
    license: str = "unknown"
    citation: str = ""
    source: str = ""  # where the study lives on EvalHub, a path or a URL


@dataclass(frozen=True)
class TableInfo:
    name: str
    path: str  # inside the dataset, e.g. data/judgments.parquet
    rows: int
    schema: pa.Schema
    json_columns: tuple[str, ...] = ()
    about: str = ""


def feature(arrow_type: pa.DataType):
    """An Arrow type in the `datasets` YAML form: {"dtype": ...}, {"list": ...} or a list of
    named features for a struct."""
    if pa.types.is_struct(arrow_type):
        return [{"name": f.name, **_named(f.type)} for f in arrow_type]
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        inner = arrow_type.value_type
        if pa.types.is_struct(inner):
            return {"list": feature(inner)}
        return {"list": _dtype(inner)}
    return {"dtype": _dtype(arrow_type)}


def _named(arrow_type: pa.DataType) -> dict:
    described = feature(arrow_type)
    return {"struct": described} if isinstance(described, list) else described


def _dtype(arrow_type: pa.DataType) -> str:
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return "string"
    if pa.types.is_boolean(arrow_type):
        return "bool"
    if pa.types.is_null(arrow_type):
        return "null"
    return str(arrow_type)  # int64, float64, ...: the names `datasets` uses


def _yaml(value, indent: int = 0) -> list[str]:
    """Lines of a YAML block for dicts, lists and scalars (scalars as JSON)."""
    pad = " " * indent
    lines = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, dict | list) and item:
                lines.append(f"{pad}{key}:")
                lines += _yaml(item, indent + 2)
            else:
                lines.append(f"{pad}{key}: {json.dumps(item, ensure_ascii=False)}")
    else:
        for item in value:
            if not isinstance(item, dict | list):
                lines.append(f"{pad}- {json.dumps(item, ensure_ascii=False)}")
                continue
            block = _yaml(item, indent + 2)
            lines.append(f"{pad}- {block[0].lstrip()}")
            lines += block[1:]
    return lines


def front_matter(text: CardText, tables: list[TableInfo]) -> dict:
    return {
        "license": text.license,
        "pretty_name": text.title,
        "tags": ["evalhub", "human-evaluation"],
        "configs": [
            {
                "config_name": table.name,
                "data_files": [{"split": "train", "path": table.path}],
                **({"default": True} if index == 0 else {}),
            }
            for index, table in enumerate(tables)
        ],
        "dataset_info": [
            {
                "config_name": table.name,
                "features": [{"name": f.name, **_named(f.type)} for f in table.schema],
                "splits": [{"name": "train", "num_examples": table.rows}],
            }
            for table in tables
        ],
    }


def _type_text(arrow_type: pa.DataType, as_json: bool) -> str:
    return "JSON text" if as_json else str(arrow_type).replace("large_", "")


def render(text: CardText, tables: list[TableInfo]) -> str:
    lines = ["---", *_yaml(front_matter(text, tables)), "---", "", f"# {text.title}", ""]
    if text.description:
        lines += [text.description.strip(), ""]
    if text.source:
        lines += [f"Exported from EvalHub: {text.source}", ""]
    lines += [f"Licence: `{text.license}`.", "", "## Tables", ""]
    for table in tables:
        lines += [f"### {table.name}", "", f"{table.rows} rows, in `{table.path}`."]
        if table.about:
            lines += ["", table.about]
        lines += ["", "| column | type |", "|---|---|"]
        for f in table.schema:
            lines.append(f"| `{f.name}` | {_type_text(f.type, f.name in table.json_columns)} |")
        lines.append("")
    lines += [
        "Columns of JSON text hold nested values (per speaker, per dimension...): read them",
        "with `json.loads`.",
        "",
        "## Loading",
        "",
        "```python",
        "from datasets import load_dataset",
        "",
        f'ds = load_dataset("parquet", data_files="{tables[0].path}", split="train")',
        "```",
        "",
    ]
    if text.citation:
        lines += ["## Citation", "", "```bibtex", text.citation.strip(), "```", ""]
    return "\n".join(lines)


def card_options(params) -> tuple[str, str]:
    """The licence and the citation a download asks for (`?license=cc-by-4.0&citation=...`),
    or UserInputError naming the field."""
    license_id = (params.get("license") or "unknown").strip()
    citation = params.get("citation") or ""
    problems = []
    if license_id not in LICENSES:
        problems.append(
            Problem(
                field="license",
                message=f"'{license_id[:60]}' is not one of the licences offered: "
                + ", ".join(LICENSES)
                + ".",
            )
        )
    if len(citation) > CITATION_CHARS:
        problems.append(
            Problem(
                field="citation",
                message=f"The citation has {len(citation):,} characters; the limit is "
                f"{CITATION_CHARS:,}.",
            )
        )
    if problems:
        raise UserInputError(problems)
    return license_id, citation
