"""The README opens with the two commands and every picture it shows is in the repository."""

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
