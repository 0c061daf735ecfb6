"""The accessibility audit of a page: axe-core, the copy axe-playwright-python bundles, run
in the page against WCAG 2.x A and AA. A violation of impact "serious" or "critical" fails
the calling test, with each violation's rule, impact and offending nodes in the message."""

from pathlib import Path

import axe_playwright_python

AXE_SCRIPT = Path(axe_playwright_python.__file__).with_name("axe.min.js")
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
FAILING = {"serious", "critical"}


def violations(page) -> list[dict]:
    """The serious and critical violations axe finds on the page as it is now."""
    # Evaluated rather than added as a <script> tag: the pages' Content-Security-Policy
    # refuses inline scripts, and Playwright's evaluate is not subject to it.
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(AXE_SCRIPT.read_text(encoding="utf-8"))
    result = page.evaluate(
        "tags => axe.run(document, {runOnly: {type: 'tag', values: tags},"
        " resultTypes: ['violations']})",
        WCAG_TAGS,
    )
    return [v for v in result["violations"] if v["impact"] in FAILING]


def describe(found: list[dict]) -> str:
    lines = []
    for violation in found:
        targets = ", ".join(" ".join(map(str, node["target"])) for node in violation["nodes"])
        lines.append(f"{violation['id']} ({violation['impact']}): {violation['help']} at {targets}")
    return "\n".join(lines)


def assert_accessible(page, where: str) -> None:
    found = violations(page)
    assert not found, f"axe finds on {where} ({page.url}):\n{describe(found)}"
