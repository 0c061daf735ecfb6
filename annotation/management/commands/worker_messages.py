"""`manage.py worker_messages`: the worker pages' catalogs brought up to date with the code
(makemessages for every translated language) and compiled (compilemessages). Needs GNU
gettext (`apt-get install gettext`); docs/translating.md says how to translate.

The compiled .mo files are committed, so `make run` and the Docker image need no gettext;
tests/annotation/test_translations.py fails when a catalog or its .mo is behind the code."""

from django.core.management import call_command
from django.core.management.base import BaseCommand

# The languages with a complete translation; Arabic is offered for its right-to-left layout
# and falls back to English until someone translates it (docs/translating.md).
TRANSLATED = ("de", "es")
# What makemessages reads: the project's own code and templates (the worker strings), not
# the virtualenv, the tests, the docs or built files; `locale` itself is read as a catalog.
MAKEMESSAGES_OPTIONS = {
    "locale": list(TRANSLATED),
    "ignore_patterns": [
        ".venv",
        "tests",
        "site",
        "docs",
        "clients",
        "staticfiles",
        "media",
        "node_modules",
        "test-artifacts",
    ],
    "add_location": "file",
    "no_wrap": True,
    "verbosity": 0,
}


class Command(BaseCommand):
    help = "Update the worker pages' translation catalogs from the code and compile them."

    def handle(self, *args, **options):
        call_command("makemessages", **MAKEMESSAGES_OPTIONS)
        call_command("compilemessages", locale=list(TRANSLATED), ignore_patterns=[".venv"])
        self.stdout.write(
            "Catalogs updated: translate the new or fuzzy entries of locale/*/LC_MESSAGES/"
            "django.po, then run this again to compile them."
        )
