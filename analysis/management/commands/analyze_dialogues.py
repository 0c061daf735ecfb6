"""`python manage.py analyze_dialogues <domain|tournament|study|campaign> NAME --json OUT.json`.

The Alexa Prize conversation metrics and unified rankings (analysis/reports/dialogue_metrics.py)
of a set of conversations, written as the result contract that module documents. A separate
command from ``analyze``: that one analyses judgments into stored runs, this one reads
conversations (their turns, timestamps, topics, user ratings, and ABC-Eval error flags).
"""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from analysis.inputs.dialogue import ERROR_LABELS, SCOPES, UnknownScope, load_dialogues
from analysis.reports import NothingToAnalyse
from analysis.reports.dialogue_metrics import TOPIC_SOURCES, dialogue_metrics_report


def _weight(text: str) -> tuple[str, float]:
    name, sep, value = text.partition("=")
    try:
        if not sep:
            raise ValueError
        return name.strip(), float(value)
    except ValueError:
        raise CommandError(f"--weight takes METRIC=NUMBER, got {text!r}.") from None


class Command(BaseCommand):
    help = (
        "Alexa Prize metrics (engagement, response error rate, depth, breadth, coverage) "
        "and their unified rankings (stack, winners' circle, confidence bands) of the "
        "conversations of a domain, tournament, study or campaign, as JSON."
    )

    def add_arguments(self, parser):
        parser.add_argument("scope", choices=SCOPES, help="What NAME names.")
        parser.add_argument("name", help="The domain's name, or the slug.")
        parser.add_argument("--json", required=True, help="Where to write it ('-': stdout).")
        parser.add_argument(
            "--topics",
            choices=TOPIC_SOURCES,
            default="labels+keywords",
            help="Topics from the turns' labels only, or the keyword classifier for the rest.",
        )
        parser.add_argument(
            "--weight",
            action="append",
            default=[],
            metavar="METRIC=NUMBER",
            help="A weight of the stack ranking (default 1 each), e.g. mean_rating=2.",
        )
        parser.add_argument(
            "--winner",
            action="append",
            default=[],
            metavar="SYSTEM",
            help="A winner of the winners' circle (default: the two best user ratings).",
        )
        parser.add_argument(
            "--error-label",
            action="append",
            default=[],
            metavar="LABEL",
            help="An ABC-Eval label marking an erroneous response (default: the "
            "undesirable behaviours).",
        )

    def handle(self, *args, scope, name, topics, weight, winner, error_label, **options):
        try:
            inputs = load_dialogues(scope, name, error_labels=tuple(error_label or ERROR_LABELS))
            result = dialogue_metrics_report(
                inputs.dialogues,
                scope=inputs.scope,
                skipped=inputs.skipped,
                topics=topics,
                error_labels=inputs.error_labels,
                weights=dict(map(_weight, weight)) if weight else None,
                winners=winner or None,
            )
        except (UnknownScope, NothingToAnalyse, ValueError) as error:
            raise CommandError(str(error)) from None
        text = json.dumps(result, indent=2, ensure_ascii=False) + "\n"
        if options["json"] == "-":
            self.stdout.write(text, ending="")
        else:
            Path(options["json"]).write_text(text, encoding="utf-8")
            self.stderr.write(
                f"{result['conversations']} conversations of {len(result['systems'])} systems "
                f"written to {options['json']}."
            )
