"""The worker pages' catalogs (locale/<language>/LC_MESSAGES/django.po and .mo) against
the code: every worker string of the code is in each catalog, translated and not fuzzy, and
the committed .mo files say what the .po files say. A new {% translate %} or gettext()
without its German and Spanish translation fails here, naming the string."""

import fcntl
import gettext
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from annotation.management.commands.worker_messages import MAKEMESSAGES_OPTIONS, TRANSLATED

LOCALE = Path(settings.BASE_DIR) / "locale"
PO = "LC_MESSAGES/django.po"


def entries(po: Path) -> list[dict]:
    """The catalog's entries: msgctxt, msgid, msgid_plural, msgstr (a list), fuzzy."""
    result, current, last = [], None, None
    for line in po.read_text(encoding="utf-8").splitlines():
        if line.startswith("#,"):
            current = {"fuzzy": "fuzzy" in line, "msgstr": []}
        elif line.startswith(("msgctxt ", "msgid ")) and (current is None or "msgid" in current):
            current = {"fuzzy": False, "msgstr": []}
        if line.startswith("#") or not line.strip():
            continue
        key, _, quoted = line.partition(" ") if not line.startswith('"') else (last, "", line)
        text = quoted[1:-1].encode().decode("unicode_escape").encode("latin-1").decode("utf-8")
        if key.startswith("msgstr"):
            if line.startswith('"'):
                current["msgstr"][-1] += text
            else:
                current["msgstr"].append(text)
        elif line.startswith('"'):
            current[key] += text
        else:
            current[key] = text
            if key in ("msgctxt", "msgid") and current not in result:
                result.append(current)
        last = key
    return [e for e in result if e.get("msgid")]  # the header's msgid is ""


def untranslated(po: Path) -> list[str]:
    return [e["msgid"] for e in entries(po) if e["fuzzy"] or not all(e["msgstr"] or [""])]


def need_gettext():
    """GNU gettext's tools, like a browser, may be missing on a laptop: the test skips with
    the reason there, and fails in CI (.ci/run installs them and sets the flag)."""
    if shutil.which("xgettext") and shutil.which("msgfmt"):
        return
    reason = "needs GNU gettext (xgettext, msgfmt): apt-get install gettext"
    if os.environ.get("EVALHUB_REQUIRE_GETTEXT", "").lower() in {"1", "true", "yes"}:
        pytest.fail(f"EVALHUB_REQUIRE_GETTEXT is set but this test {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def extracted(tmp_path_factory):
    """The catalogs as makemessages makes them from the code now, merged with the committed
    translations, in a directory of their own: makemessages writes into the `locale`
    beside the files it reads, so it reads the project through links from a directory
    whose `locale` holds copies (the committed catalogs are left alone)."""
    need_gettext()
    root = tmp_path_factory.mktemp("project")
    base = Path(settings.BASE_DIR)
    for entry in base.iterdir():
        if entry.name not in ("locale", ".git", ".venv"):
            (root / entry.name).symlink_to(entry)
    for language in TRANSLATED:
        (root / "locale" / language / "LC_MESSAGES").mkdir(parents=True)
        shutil.copy(LOCALE / language / PO, root / "locale" / language / PO)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        patch.setattr(settings, "LOCALE_PATHS", [root / "locale"])
        # makemessages writes temporary .py copies of the templates beside them, through
        # the links: pytest-xdist workers running it at once would delete each other's.
        with open(Path(tempfile.gettempdir()) / "evalhub-makemessages.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            call_command("makemessages", symlinks=True, **MAKEMESSAGES_OPTIONS)
    return root / "locale"


@pytest.mark.parametrize("language", TRANSLATED)
def test_every_worker_string_of_the_code_is_translated(extracted, language):
    missing = untranslated(extracted / language / PO)
    assert missing == [], f"Not translated into {language} (see docs/translating.md): {missing}"


@pytest.mark.parametrize("language", TRANSLATED)
def test_the_committed_catalog_has_the_code_s_strings(extracted, language):
    def ids(po):
        return {(e.get("msgctxt"), e["msgid"]) for e in entries(po)}

    committed, now = ids(LOCALE / language / PO), ids(extracted / language / PO)
    assert (now - committed, committed - now) == (set(), set()), (
        "locale/ is behind the code: run `make messages` and translate"
    )


@pytest.mark.parametrize("language", TRANSLATED)
def test_the_committed_mo_is_the_po_compiled(tmp_path, language):
    need_gettext()
    compiled = tmp_path / "django.mo"
    subprocess.run(["msgfmt", "--check", "-o", compiled, LOCALE / language / PO], check=True)
    with (
        open(compiled, "rb") as fresh,
        open(LOCALE / language / "LC_MESSAGES/django.mo", "rb") as mo,
    ):
        assert gettext.GNUTranslations(mo)._catalog == gettext.GNUTranslations(fresh)._catalog


def test_the_entries_are_read(extracted):
    # A guard on the reader: a catalog of ours has hundreds of entries, plural ones among them.
    read = entries(LOCALE / "de" / PO)
    assert len(read) > 250 and any("msgid_plural" in e for e in read)
    assert untranslated(LOCALE / "de" / PO) == []


def test_a_missing_translation_is_found(tmp_path):
    po = tmp_path / "django.po"
    po.write_text(
        'msgid ""\nmsgstr ""\n\nmsgid "Next"\nmsgstr ""\n\n#, fuzzy\nmsgid "Send"\n'
        'msgstr "Senden"\n\nmsgid "Start"\nmsgstr "Beginnen"\n',
        encoding="utf-8",
    )
    assert untranslated(po) == ["Next", "Send"]
