"""The documentation site under docs/: the pages link only inside the repository, the
guides link a sample of every upload format, and the build hooks generate the
references from the code (``make test`` builds the whole site with --strict)."""

import importlib.util
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from mkdocs.exceptions import PluginError

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
LINK = re.compile(r"\]\(([^)\s]+)\)")


def load_hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hooks = load_hooks()


def local_targets(text: str) -> list[str]:
    return [
        target.split("#")[0]
        for target in LINK.findall(text)
        if not target.startswith(("http://", "https://", "mailto:", "#"))
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_every_page_links_only_inside_the_repository(page):
    text = page.read_text()
    # (`/work/<campaign>/` is the crowdworkers' start link, a URL of the site itself.)
    for outside in ("../shared", "/work/shared", "/work/wt", "/home/"):
        assert outside not in text, f"{page.name} points outside the repository: {outside}"
    generated = {(DOCS / uri).resolve() for uri in hooks.GENERATED}
    for target in local_targets(text):
        path = (page.parent / target).resolve()
        assert path.is_relative_to(ROOT) and (path.exists() or path in generated), target


def test_the_architecture_page_links_the_readme():
    assert "../README.md" in local_targets((DOCS / "architecture.md").read_text())


def test_the_guides_link_a_sample_for_every_upload_format():
    guides = "".join(page.read_text() for page in (DOCS / "guides").glob("*.md"))
    for name in (
        "prompts.txt",
        "prompts.jsonl",
        "responses.txt",
        "responses.jsonl",
        "responses.csv",
        "conversations.jsonl",
        "gold-and-training.jsonl",
    ):
        assert f"(../examples/{name})" in guides
        assert (DOCS / "examples" / name).is_file()


def test_the_result_contract_page_shows_every_report_modules_contract():
    page = hooks.result_contract_page()
    for module in ("chateval", "abc_eval", "likert", "comparative", "study", "ranking"):
        assert f"## `analysis.reports.{module}`" in page
    assert "## `analysis.reports`" in page
    # The contract blocks come through as code, not as reStructuredText.
    assert '"behaviours": <abc_eval section> | null' in page
    assert "::" not in page.replace("`::`", "")


def test_rst_literal_blocks_and_headings_become_markdown():
    text = 'Result contract\n---------------\nEvery number::\n\n    {"a"}\n\nAfter ``x``.'
    assert hooks.rst_to_markdown(text) == (
        '**Result contract**\nEvery number:\n\n```text\n{"a"}\n```\n\nAfter `x`.'
    )


def page_in(src_uri: str):
    return SimpleNamespace(file=SimpleNamespace(src_uri=src_uri))


def test_a_link_to_a_repository_file_outside_the_site_becomes_its_path():
    config = {"docs_dir": str(DOCS), "repo_url": None}
    text = "See [the history](../bench/README.md) and [the page](api.md)."
    out = hooks.on_page_markdown(text, page_in("benchmarks.md"), config, None)
    assert out == "See the history (`bench/README.md`) and [the page](api.md)."


def test_a_link_to_a_repository_file_becomes_a_link_to_the_repository_when_configured():
    config = {"docs_dir": str(DOCS), "repo_url": "https://example.org/evalhub/"}
    out = hooks.on_page_markdown("[h](../../bench/README.md)", page_in("guides/x.md"), config, None)
    assert out == "[h](https://example.org/evalhub/blob/main/bench/README.md)"


def test_a_link_to_a_missing_repository_file_fails_the_build():
    config = {"docs_dir": str(DOCS), "repo_url": None}
    with pytest.raises(PluginError, match="missing file: ../bench/NOPE.md"):
        hooks.on_page_markdown("[x](../bench/NOPE.md)", page_in("benchmarks.md"), config, None)


def test_links_inside_code_blocks_are_left_alone():
    config = {"docs_dir": str(DOCS), "repo_url": None}
    text = "```\n[x](../bench/NOPE.md)\n```"
    assert hooks.on_page_markdown(text, page_in("benchmarks.md"), config, None) == text


def pinned(requirements: str) -> list[str]:
    names = []
    for line in (ROOT / requirements).read_text().splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            names.append(re.split(r"[\[=<>~]", line)[0].lower())
    return names


@pytest.mark.parametrize("requirements", ["requirements.txt", "requirements-dev.txt"])
def test_the_dependencies_page_says_why_each_pinned_package_is_there(requirements):
    page = (DOCS / "dependencies.md").read_text()
    named = {
        name.strip().lower()
        for row in re.findall(r"^\| ([^|]+) \|", page, re.M)
        for name in row.split(",")
    }
    assert [name for name in pinned(requirements) if name not in named] == []


class Reader:
    """Reads."""


class Writer:
    """Writes,
    on two lines.

    Not this paragraph."""


class PerMethod:
    rules = {"GET": (Reader,), "POST": (Reader, Writer)}

    def rule(self, request, view):
        return self.rules.get(request.method, ())


def test_who_may_call_an_operation_is_its_methods_rule():
    view = SimpleNamespace(get_permissions=lambda: [PerMethod()])
    assert hooks._who(view, "get") == "`Reader`: Reads."
    assert hooks._who(view, "post") == "`Reader`: Reads.; `Writer`: Writes, on two lines."


def test_who_may_call_an_operation_is_its_views_permission_classes():
    view = SimpleNamespace(get_permissions=lambda: [Reader(), Writer()])
    assert hooks._who(view, "delete") == "`Reader`: Reads.; `Writer`: Writes, on two lines."
    assert hooks._who(SimpleNamespace(get_permissions=lambda: []), "get") == "anyone"


def test_the_settings_page_is_what_the_declared_schema_renders(monkeypatch):
    schema = SimpleNamespace(reference_markdown=lambda: "# Settings reference\n\n| a | b |\n")
    monkeypatch.setitem(sys.modules, "evalhub.config", schema)
    assert hooks.settings_page() == "# Settings reference\n\n| a | b |\n"


def test_the_api_page_lists_every_operation_with_who_may_call_it():
    page = hooks.api_page()
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    assert f"{len(rows)} operations." in page
    assert any(row.startswith("| `POST /api/campaigns/` |") and "`SignedIn`" in row for row in rows)
    assert any(
        row.startswith("| `POST /api/campaigns/{slug}/crowd/pay/` |") and "`IsStaff`" in row
        for row in rows
    )
    assert all(not row.endswith("| unknown |") for row in rows)


def test_the_limits_page_lists_every_text_limit_quota_and_rate():
    from evalhub import config, limits

    page = hooks.limits_page()
    for name in limits.APPLIES_TO:
        assert f"| `{name}` | {getattr(limits, name):,} |" in page
    for name, field in config.Settings.model_fields.items():
        if field.json_schema_extra["group"] in ("limits", "quotas"):
            assert f"| `{name}` |" in page
