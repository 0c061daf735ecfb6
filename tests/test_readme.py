"""The README opens with the two commands, every picture it shows is in the repository, it
points nowhere outside the repository, and it links the architecture page."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def test_it_opens_with_the_two_commands():
    first_block = re.search(r"```sh\n(.*?)```", README, re.S).group(1)
    commands = [line.split("#")[0].strip() for line in first_block.strip().splitlines()]
    assert commands == ["make run", "make test"]
    assert README.index("make run") < README.index("## ")


def test_every_screenshot_exists():
    pictures = re.findall(r"\]\((docs/screenshots/[^)]+\.png)\)", README)
    assert pictures, "the README shows the browser tests' screenshots"
    for picture in pictures:
        assert (ROOT / picture).is_file(), picture


ARCHITECTURE = ROOT / "docs" / "architecture.md"
# Markdown links and pictures: [text](target) and ![text](target).
LINK = re.compile(r"\]\(([^)\s]+)\)")


def local_targets(text: str) -> list[str]:
    return [
        target.split("#")[0]
        for target in LINK.findall(text)
        if not target.startswith(("http://", "https://", "mailto:", "#"))
    ]


def test_it_points_nowhere_outside_the_repository():
    # A clone holds this repository only: no sibling folders, no paths on a developer's disk.
    for outside in ("../", "shared/", "/work/", "/home/"):
        assert outside not in README, f"the README points outside the repository: {outside}"
    for target in local_targets(README):
        path = (ROOT / target).resolve()
        assert path.is_relative_to(ROOT) and path.exists(), target


def test_the_architecture_page_exists_and_is_linked():
    assert ARCHITECTURE.is_file()
    assert "docs/architecture.md" in local_targets(README)


def test_the_architecture_page_links_only_inside_the_repository():
    text = ARCHITECTURE.read_text()
    assert "shared/" not in text
    targets = local_targets(text)
    assert "../README.md" in targets
    for target in targets:
        path = (ARCHITECTURE.parent / target).resolve()
        assert path.is_relative_to(ROOT) and path.exists(), target


def test_the_readme_links_a_sample_for_every_upload_format():
    for name in (
        "prompts.txt",
        "prompts.jsonl",
        "responses.txt",
        "responses.jsonl",
        "responses.csv",
        "conversations.jsonl",
        "gold-and-training.jsonl",
    ):
        assert f"(docs/examples/{name})" in README
