"""`python manage.py analyze <slug> --json OUT.json [--kind tournament|campaign|study]
[--exclude-blocked] [--preset as-published] [--param NAME=VALUE ...] [--plots]`.

Analyses a tournament, a campaign or an imported study synchronously (or reuses the stored
run for the same judgments and settings) and writes the result contract with the run's
provenance, as the API serves it. The slug is looked up as a tournament, then a campaign,
then a study, unless ``--kind`` says which.

The run's plots are not drawn unless ``--plots`` is given: the contract does not contain
them, and drawing them (a second or more of matplotlib) would double the command's time.
The first result page that shows the run queues their drawing (``analysis.runs.drawing``).

A Spot The Bot run's stability curve (10-20 s of CPU for a real domain, ten times the
rest) is not waited for unless ``--wait`` is given: the contract is written with
``"stability": null`` and ``"run": {"stability": "pending"}``, and the curve is computed
as a part of its own (``analysis.runs.stability``): queued to a worker when there is a
broker; without one, when a result page shows the run or by this command with ``--wait``.
"""

import json
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from analysis.inputs.judgments import NoCampaign
from analysis.models import AnalysisRun
from analysis.pages.leaderboards import contract
from analysis.reports import NothingToAnalyse
from analysis.runs import stability as stability_part
from analysis.runs.drawing import draw_plots_now
from analysis.runs.parameters import PRESETS, preset_parameters
from analysis.runs.tasks import analyze_campaign, analyze_study, analyze_tournament
from annotation.models import Campaign, Study
from tournaments.models import Tournament

# What a slug may name, in the order it is looked up, and how each is analysed.
SUBJECTS = {
    "tournament": (Tournament, analyze_tournament),
    "campaign": (Campaign, analyze_campaign),
    "study": (Study, analyze_study),
}


def resolve(slug: str, kind: str | None):
    """The subject named by ``slug`` (of ``kind``, or the first kind that has it) and the
    function that analyses it."""
    for name, (model, analyze) in SUBJECTS.items():
        if kind in (None, name):
            subject = model.objects.filter(slug=slug).first()
            if subject is not None:
                return subject, analyze
    what = kind or "tournament, campaign or study"
    raise CommandError(f"No {what} with the slug {slug!r}.")


class Command(BaseCommand):
    # No system checks: they import the URLconf and every view module (a third of a second
    # or more) to check pages this command never serves; ``manage.py check``, ``migrate`` and
    # ``runserver`` run them.
    requires_system_checks = []
    help = (
        "Analyse a tournament (win rates, TrueSkill clusters, Bradley-Terry, survival, "
        "agreement, stability), a campaign or an imported study (behaviour rates, Likert "
        "means, comparative win/tie/loss, agreement, validity) now and write the result "
        "contract as JSON."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", help="The tournament's, campaign's or study's slug.")
        parser.add_argument(
            "--kind",
            choices=list(SUBJECTS),
            help="What the slug names (default: the first of tournament, campaign, study).",
        )
        parser.add_argument(
            "--json", required=True, help="Where to write the result ('-': stdout)."
        )
        parser.add_argument(
            "--exclude-blocked", action="store_true", help="Leave out blocked workers' judgments."
        )
        parser.add_argument("--seed", type=int, help="Seed of the bootstraps (default 0).")
        parser.add_argument("--replicates", type=int, help="TrueSkill bootstrap replicates.")
        parser.add_argument(
            "--preset",
            choices=list(PRESETS),
            default="defaults",
            help="Named settings: 'as-published' is Spot The Bot's statistics as published "
            "(2x2 chi-square with Yates, Bonferroni, Zhao & Sun's log-rank test).",
        )
        parser.add_argument(
            "--plots",
            action="store_true",
            help="Also draw the run's plots before writing (by default the first result page "
            "that shows the run has them drawn).",
        )
        parser.add_argument(
            "--wait",
            action="store_true",
            help="Wait for the stability curve (computed here, or by the worker computing "
            "it) and write the result with it; by default it follows the result.",
        )
        parser.add_argument(
            "--param",
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help="Any other analysis parameter (analysis.runs.parameters.AnalysisParameters), "
            "e.g. --param correction=bonferroni --param leave_one_out=true.",
        )

    def handle(self, *args, slug, exclude_blocked, seed, replicates, **options):
        output = options["json"]
        subject, analyze = resolve(slug, options.get("kind"))
        parameters = dict(_parameter(text) for text in options["param"])
        parameters["exclude_blocked"] = exclude_blocked
        if seed is not None:
            parameters["seed"] = seed
        if replicates is not None:
            parameters["replicates"] = replicates
        started = time.perf_counter()
        try:
            parameters = preset_parameters(options["preset"], parameters)
            run = analyze(
                subject, parameters, synchronous=True, plots=options["plots"], stability=False
            )
        except (NoCampaign, NothingToAnalyse, ValueError) as reason:
            raise CommandError(str(reason)) from None
        seconds = time.perf_counter() - started
        if run.status == AnalysisRun.Status.FAILED:
            raise CommandError(f"The analysis failed: {run.error}")
        if run.status != AnalysisRun.Status.SUCCEEDED:
            raise CommandError(
                f"Analysis {run.pk} is being computed elsewhere ({run.get_status_display()}); "
                "try again when it has finished."
            )
        if options["wait"] and run.stability_state in stability_part.UNFINISHED:
            stability_part.wait(run.pk)
            run.refresh_from_db()
        elif run.stability_state == AnalysisRun.StabilityState.PENDING and stability_part.apart():
            stability_part.queue(run.pk)
        if options["plots"] and draw_plots_now(run.pk) == "drawn":
            run.refresh_from_db()
        text = json.dumps(contract(run), indent=2, ensure_ascii=False)
        if output == "-":
            self.stdout.write(text)
        else:
            Path(output).write_text(text + "\n", encoding="utf-8")
        result = run.result
        clusters: dict[int, list[str]] = {}
        for row in result.get("ranking") or []:
            clusters.setdefault(row["cluster"], []).append(row["system"])
        self.stderr.write(
            f"{slug}: {result['judgments']} judgments, {len(result['systems'])} systems; "
            f"analysis {run.pk} in {seconds:.1f} s"
            + (f" (computed in {run.seconds:.1f} s)" if run.seconds is not None else "")
        )
        for number, systems in sorted(clusters.items()):
            self.stderr.write(f"  cluster {number}: {', '.join(systems)}")
        note = _stability_note(run, slug)
        if note:
            self.stderr.write(note)


def _parameter(text: str) -> tuple[str, object]:
    name, separator, value = text.partition("=")
    if not separator or not name:
        raise CommandError(f"--param takes NAME=VALUE, got {text!r}")
    try:
        return name, json.loads(value)
    except json.JSONDecodeError:
        return name, value


def _stability_note(run: AnalysisRun, slug: str) -> str:
    """What the output says of a stability curve computed apart ("" when it came with the
    report or there is none)."""
    state = run.stability_state
    again = f"`manage.py analyze {slug} --wait` (with the same options)"
    if state in stability_part.UNFINISHED and stability_part.apart():
        return (
            f"  stability curve: being computed by a worker, as a part of analysis {run.pk} of "
            f'its own; the output has "stability": null until then. The result page and the '
            f"API show it when it is done; {again} waits for it and writes it."
        )
    if state in stability_part.UNFINISHED:
        return (
            f"  stability curve: not computed yet (no task queue here, it is a part of "
            f'analysis {run.pk} of its own; the output has "stability": null): the result '
            f"page that shows the run computes it, or {again} computes it now and writes it."
        )
    if state == AnalysisRun.StabilityState.FAILED:
        return (
            f"  stability curve: FAILED ({run.stability_error}); running {again} again retries it."
        )
    return ""
