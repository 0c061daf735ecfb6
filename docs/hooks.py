"""MkDocs hooks: the reference pages are generated from the code at build time, never
written by hand, and links from the pages to the repository's own files are checked.

* ``reference/result-contract.md``: the "contract" sections of the report modules'
  docstrings (``analysis/reports/*.py``), which are the definition the tests check the
  reports against (the typed serializers of the API cover the tournament reports only);
* ``reference/api.md``: every path and method of the OpenAPI schema drf-spectacular
  generates, with its summary and the permission classes that decide who may call it;
* ``reference/settings.md``: ``evalhub.config.reference_markdown()``, the declared settings
  schema's own rendering;
* ``reference/limits.md``: the text limits (``evalhub.limits``) and the size, quota and rate
  settings (two groups of the settings schema).

A page links a file outside ``docs/`` (``../bench/README.md``) so that the link works on
GitHub; the site holds no copy of the source tree, so such a link is checked to exist (a
missing file fails the build) and becomes a link to ``repo_url`` when one is configured,
else the file's path as code.
"""

from __future__ import annotations

import ast
import os
import posixpath
import re
import sys
from pathlib import Path
from types import SimpleNamespace

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parent.parent
REPORTS = ROOT / "analysis" / "reports"
# The order the reference presents the reports in: tournaments first, then the sections
# the other report kinds add; any other module with a contract follows alphabetically.
REPORT_ORDER = ["__init__", "chateval", "abc_eval", "likert", "comparative", "study"]
GENERATED = {
    "reference/result-contract.md": "result_contract_page",
    "reference/api.md": "api_page",
    "reference/settings.md": "settings_page",
    "reference/limits.md": "limits_page",
}
LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")


def on_files(files, config):
    for uri, builder in GENERATED.items():
        content = globals()[builder]()
        files.append(File.generated(config, uri, content=content))
    return files


def on_page_markdown(markdown, page, config, files):
    docs_dir = Path(config["docs_dir"]).resolve()
    here = (docs_dir / page.file.src_uri).parent

    def outside(match: re.Match) -> str:
        bang, text, target = match.groups()
        if target.startswith(("http://", "https://", "mailto:", "#")):
            return match.group(0)
        path_part, _, anchor = target.partition("#")
        resolved = (here / path_part).resolve()
        if resolved.is_relative_to(docs_dir):
            return match.group(0)  # MkDocs validates links inside the site itself
        if not resolved.is_relative_to(ROOT) or not resolved.exists():
            raise PluginError(f"{page.file.src_uri}: link to a missing file: {target}")
        relative = resolved.relative_to(ROOT).as_posix()
        if config.get("repo_url"):
            url = posixpath.join(config["repo_url"], "blob/main", relative)
            return f"{bang}[{text}]({url}{'#' + anchor if anchor else ''})"
        return f"{text} (`{relative}`)" if text.strip("`") != relative else f"`{relative}`"

    return _outside_fences(markdown, lambda line: LINK.sub(outside, line))


def _outside_fences(markdown: str, change) -> str:
    lines, fenced = [], False
    for line in markdown.split("\n"):
        if FENCE.match(line.lstrip()):
            fenced = not fenced
        lines.append(line if fenced else change(line))
    return "\n".join(lines)


# --- the result contract ------------------------------------------------------------------------


def rst_to_markdown(text: str) -> str:
    """The subset of reStructuredText the report docstrings use: ``code``, ``::`` literal
    blocks, underlined headings and :role:`target` references."""
    text = re.sub(r":\w+:`([^`]+)`", r"``\1``", text)
    text = re.sub(r"``([^`]+)``", r"`\1`", text)
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if i + 1 < len(lines) and line.strip() and re.fullmatch(r"-{3,}|={3,}", lines[i + 1]):
            out.append(f"**{line.strip()}**")
            i += 2
            continue
        if line.rstrip().endswith("::"):
            lead = line.rstrip()[:-2].rstrip()
            if lead:
                out.append(lead + ":")
            i += 1
            block: list[str] = []
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith(" ")):
                block.append(lines[i])
                i += 1
            while block and not block[-1].strip():
                block.pop()
            while block and not block[0].strip():
                block.pop(0)
            indent = min(len(b) - len(b.lstrip()) for b in block if b.strip())
            out += ["", "```text", *(b[indent:] for b in block), "```", ""]
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


def report_docstrings() -> list[tuple[str, str]]:
    """(module, docstring) of every report module whose docstring states a contract."""
    found = {}
    for path in sorted(REPORTS.glob("*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        if re.search(r"contract", doc, re.I) and "::" in doc:
            found[path.stem] = doc
    if not found:
        raise PluginError(f"no report module under {REPORTS} documents a result contract")
    order = [m for m in REPORT_ORDER if m in found]
    order += sorted(m for m in found if m not in order)
    return [(m, found[m]) for m in order]


def result_contract_page() -> str:
    parts = [
        "# Result contract",
        "",
        "Generated at build time from the docstrings of the report modules "
        "(`analysis/reports/`), which define what each analysis writes; the tests check "
        "the stored results against them. Every number is a JSON number or `null`. A "
        "result read through the API or `manage.py analyze --json` also carries `run`: "
        '`{"id", "finished_at", "parameters", "inputs_digest", "versions"}`, where it came '
        "from. How to read the figures: [Analysis and leaderboards](../analysis.md).",
    ]
    for module, doc in report_docstrings():
        name = "analysis.reports" + ("" if module == "__init__" else f".{module}")
        parts += ["", f"## `{name}`", "", rst_to_markdown(doc)]
    return "\n".join(parts) + "\n"


# --- the API reference --------------------------------------------------------------------------


def _importable():
    """The project's packages importable from the build, wherever mkdocs was started."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))


def _django():
    _importable()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalhub.settings")
    os.environ.setdefault("DEBUG", "1")
    import django

    django.setup()


def _who(view, method: str) -> str:
    """The permissions the view checks for `method` (its action's, for a viewset), each with
    the first paragraph of its docstring. A per-method declaration (a permission with ``rules``
    and ``rule(request, view)``, as ``evalhub.permissions.by_method`` makes) is expanded to
    the rule that applies to this method."""
    if view is None:
        return "unknown"
    try:
        permissions = list(view.get_permissions())
    except Exception:  # a get_permissions that needs a request: the declared classes
        permissions = [cls() for cls in getattr(view, "permission_classes", [])]
    classes = []
    for permission in permissions:
        if hasattr(permission, "rules") and callable(getattr(permission, "rule", None)):
            classes += list(permission.rule(SimpleNamespace(method=method.upper()), view))
        else:
            classes.append(type(permission))
    said = []
    for permission in classes:
        doc = " ".join((permission.__doc__ or "").strip().split("\n\n")[0].split())
        said.append(f"`{permission.__name__}`" + (f": {doc}" if doc else ""))
    return "; ".join(said).replace("|", "\\|") or "anyone"


def api_page() -> str:
    _django()
    from drf_spectacular.generators import SchemaGenerator

    generator = SchemaGenerator()
    schema = generator.get_schema(request=None, public=True)
    views = {}
    # The schema's own walk over the URL patterns: (path, regex, method, view instance). A
    # private method of the pinned drf-spectacular; tests/test_docs.py builds this page.
    for path, _regex, method, view in generator._get_paths_and_endpoints():
        views[(path, method.lower())] = view
    rows = []
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if method not in {"get", "post", "put", "patch", "delete"}:
                continue
            summary = operation.get("summary") or operation.get("description") or ""
            summary = " ".join(summary.split("\n\n")[0].split()).replace("|", "\\|")
            anonymous = {} in operation.get("security", [{}])
            who = _who(views.get((path, method)), method)
            if anonymous and who != "anyone":
                who = f"no login needed; {who}"
            rows.append(f"| `{method.upper()} {path}` | {summary} | {who} |")
    return (
        "\n".join(
            [
                "# API reference",
                "",
                f"Generated at build time from the OpenAPI schema ({schema['info']['title']} "
                f"{schema['info']['version']}) that drf-spectacular builds from the views: the "
                "same schema the server publishes at `/api/schema/`, with Swagger UI at "
                "`/api/docs/`. *Who* lists the permission classes the view checks; objects a "
                "caller may not see answer 404. How to use the API, with a whole study "
                "walked through: [REST API](../api.md).",
                "",
                f"{len(rows)} operations.",
                "",
                "| operation | summary | who |",
                "|---|---|---|",
                *rows,
            ]
        )
        + "\n"
    )


# --- the settings reference ---------------------------------------------------------------------


def settings_page() -> str:
    _importable()
    from evalhub.config import reference_markdown

    return reference_markdown()


def limits_page() -> str:
    _importable()
    from evalhub import limits
    from evalhub.config import GROUPS, group_table

    return "\n".join(
        [
            "# Limits, quotas and rates",
            "",
            "What one user may store, own and ask for; generated from `evalhub/limits.py` and "
            "the declared settings. Staff are exempt from the quotas, not from the rates. "
            "[Security and reliability](../security.md) lists the tests that prove each.",
            "",
            "## Text",
            "",
            "The longest text each kind of field holds. The forms, the API, the model's own "
            "validation and the upload parsers refuse a longer one, naming the field (or the "
            "line of the file) and the limit. Fixed in the code, not settings: a stored text "
            "longer than its field's limit would fail every later edit.",
            "",
            limits.reference_markdown(),
            "",
            f"## {GROUPS['limits']}",
            "",
            group_table("limits"),
            "",
            f"## {GROUPS['quotas']}",
            "",
            "A quota refused answers `400` (a count: remove something, or ask staff) or `429` "
            "with `Retry-After` (the day's uploads) in the API's one error shape, and a "
            "message on the page. A rate refused answers `429` with `Retry-After`. Rates "
            "count per account (per address signed out) in the project's cache (Redis with "
            "`CACHE_URL`; per web process without), and let requests through, logged, while "
            "the cache cannot be reached.",
            "",
            group_table("quotas"),
            "",
        ]
    )
