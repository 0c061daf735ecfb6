"""The README is the front door: it opens with the two commands, stays under 200 lines,
names the demo accounts, maps every page of the documentation site, and points nowhere
outside the repository."""

import re
from pathlib import Path

import yaml

from evalhub.demo import DEMO_ACCOUNTS
from tests.test_docs import load_hooks

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
# Markdown links and pictures: [text](target) and ![text](target).
LINK = re.compile(r"\]\(([^)\s]+)\)")


def local_targets(text: str) -> list[str]:
    return [
        target.split("#")[0]
        for target in LINK.findall(text)
        if not target.startswith(("http://", "https://", "mailto:", "#"))
    ]


def nav_pages(nav) -> list[str]:
    """Every page of mkdocs.yml's nav, in order."""
    pages = []
    for entry in nav:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        pages += nav_pages(value) if isinstance(value, list) else [value]
    return pages


def test_it_opens_with_the_two_commands():
    first_block = re.search(r"```sh\n(.*?)```", README, re.S).group(1)
    commands = [line.split("#")[0].strip() for line in first_block.strip().splitlines()]
    assert commands == ["make run", "make test"]
    assert README.index("make run") < README.index("## ")


def test_it_is_a_front_door_not_a_manual():
    assert len(README.splitlines()) < 200


def test_it_names_every_demo_account_and_how_to_see_their_passwords():
    for username in DEMO_ACCOUNTS:
        assert f"`{username}`" in README, username
    assert "python manage.py demo_accounts" in README
    assert "demo_accounts\n--reset" in README or "demo_accounts --reset" in README


def test_it_points_nowhere_outside_the_repository():
    # A clone holds this repository only: no sibling folders, no paths on a developer's disk.
    for outside in ("../", "shared/", "/work/", "/home/"):
        assert outside not in README, f"the README points outside the repository: {outside}"
    for target in local_targets(README):
        path = (ROOT / target).resolve()
        assert path.is_relative_to(ROOT) and path.exists(), target


def test_its_map_links_every_written_page_of_the_site():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    generated = set(load_hooks().GENERATED)
    written = [page for page in nav_pages(config["nav"]) if page not in generated]
    assert "architecture.md" in written
    linked = set(local_targets(README))
    # index.md is the site's home page: on GitHub the README is the home page.
    missing = [page for page in written if page != "index.md" and f"docs/{page}" not in linked]
    assert missing == []
    for page in generated:
        assert not (ROOT / "docs" / page).exists(), f"{page} is generated at build time"
