"""Small simulated tournaments and stored runs for the analysis tests."""

import functools
import itertools

from django.utils import timezone

from analysis.models import AnalysisRun
from analysis.pages.plots import render_plots
from analysis.reports import build_report, canonical_digest, normalize_parameters
from analysis.runs.tasks import library_versions
from demo.leaderboards import build_ab_tournament, build_spot_the_bot_tournament
from demo.simulation import ABModel, SpotTheBotModel, simulate_spot_the_bot
from tournaments.models import Tournament

_counter = itertools.count(1)

# Enough replicates to rank a handful of systems, few enough to keep a test under a second.
FAST = {
    "replicates": 100,
    "bt_bootstrap": 100,
    "alpha_resamples": 200,
    "stability_points": 2,
    "stability_subsamples": 2,
    "stability_replicates": 20,
}
HAZARDS = {"bot-strong": 0.05, "bot-middle": 0.3, "bot-weak": 1.2}
STRENGTHS = {"ab-strong": 1.5, "ab-middle": 0.0, "ab-weak": -1.5}


def small_spot_the_bot_model(**fields) -> SpotTheBotModel:
    fields.setdefault("hazards", HAZARDS)
    fields.setdefault("conversations_per_pair", 6)
    fields.setdefault("human_conversations", 4)
    fields.setdefault("workers", 10)
    fields.setdefault("careless_workers", 2)
    return SpotTheBotModel(**fields)


def spot_the_bot_tournament(*, finish: bool = False, **options) -> Tournament:
    """A small judged Spot The Bot tournament; its campaign stays live unless `finish`."""
    options.setdefault("slug", f"stb-{next(_counter)}")
    model = options.pop("model", None) or small_spot_the_bot_model()
    return build_spot_the_bot_tournament(model, options.pop("slug"), finish=finish, **options)


def ab_tournament(*, finish: bool = False, **options) -> Tournament:
    options.setdefault("slug", f"ab-{next(_counter)}")
    model = options.pop("model", None) or ABModel(
        STRENGTHS, prompts=12, workers=8, careless_workers=1
    )
    return build_ab_tournament(model, options.pop("slug"), finish=finish, **options)


@functools.cache
def canned_result() -> tuple[dict, dict]:
    """A result and its plots from a simulated study (computed once per test session)."""
    data = simulate_spot_the_bot(small_spot_the_bot_model(), seed=3)
    result = build_report(data, FAST)
    return result, render_plots(result)


def stored_run(
    tournament: Tournament, *, status=AnalysisRun.Status.SUCCEEDED, **fields
) -> AnalysisRun:
    """An AnalysisRun written directly, with the canned result when it succeeded."""
    result, plots = canned_result()
    if status == AnalysisRun.Status.SUCCEEDED:
        fields.setdefault("result", {**result, "tournament": tournament.slug})
        fields.setdefault("plots", plots)
        # As a run whose plots were drawn records it: matplotlib in its provenance.
        fields.setdefault("versions", library_versions(plotted=bool(fields["plots"])))
        fields.setdefault("started_at", timezone.now())
        fields.setdefault("finished_at", timezone.now())
    parameters = normalize_parameters(FAST)
    return AnalysisRun.objects.create(
        tournament=tournament,
        parameters=parameters,
        parameters_digest=canonical_digest(parameters),
        inputs_digest=fields.pop("inputs_digest", f"inputs-{next(_counter)}"),
        status=status,
        **fields,
    )


def bare_tournament(owner=None, *, published: bool = True, **fields) -> Tournament:
    n = next(_counter)
    fields.setdefault("slug", f"tournament-{n}")
    fields.setdefault("name", f"Tournament {n}")
    fields.setdefault("kind", Tournament.Kind.SPOT_THE_BOT)
    return Tournament.objects.create(owner=owner, published=published, **fields)


def assert_clusters_follow(order: list[str], ranking: list[dict]):
    """Clusters never put a weaker system above a stronger one; the extremes are apart."""
    cluster = {row["system"]: row["cluster"] for row in ranking}
    clusters = [cluster[system] for system in order]
    assert clusters == sorted(clusters), clusters
    assert clusters[0] == 1 and clusters[-1] == max(clusters) > 1
