"""The analysis of one tournament: plain arrays in, the result contract (JSON) out.

Pure: numpy and ``evalstats`` only, no Django and no I/O, so the same function serves
the Celery task, the ``analyze`` command and the tests. ``analysis.inputs.judgments`` turns the
database into the dataclasses of ``analysis.reports.data``; ``build_report`` does the rest,
with one module per report kind (``spot_the_bot``, ``ab``) over the shared ``common`` parts
and the ``parameters`` every run is given.

Result contract
---------------
Every number is a JSON number or ``null`` (NaN and infinities become ``null``)::

    {"tournament": slug, "kind": "spot_the_bot" | "ab",
     "systems": [slug, ...],                    # best first (TrueSkill order)
     "judgments": n,                            # judgments by workers that were analysed
     "pairwise": [{"a", "b", "wins_a", "wins_b", "ties", "win_rate_a",
                   "p_value", "p_adjusted"}],   # a ranked above b; p: binomial (or
                                                # chi-square, or the 2x2 chi-square
                                                # test of the released code) of wins vs
                                                # losses, p_adjusted: Holm (or the
                                                # chosen correction) over the pairs
     "ranking": [{"system", "win_rate", "mu", "sigma", "rank_range": [lo, hi],
                  "cluster"}],                  # TrueSkill bootstrap; mu, sigma: means over
                                                # the replicates; cluster 1 = best
     "bradley_terry": [{"system", "rating", "ci": [lo, hi], "rank"}],
                                                # Elo-like scale (mean 1000), percentile
                                                # bootstrap CI, rank = 1 + #significantly better
     "survival": {"segment_lengths": [k, ...],
                  "curves": {system: [S(k) for each segment length]},   # Turnbull NPMLE
                  "human": [S(k), ...] | null,  # the human-human controls, for reference
                  "spotted": {system: [[spotted, judged] for each k]},
                  "logrank": [{"a", "b", "statistic", "p_value", "p_adjusted"}],
                  "logrank_all": {"statistic", "df", "p_value"} | null,
                  "logrank_variance": "permutation" | "hypergeometric" | "zhao-sun",
                  "cox": {system: {feature: {"coef", "se", "p_value"}}}},
                                                # coef < 0: preferred speakers survive longer
     "features": {"names": [feature, ...],
                  "win_rates": {system: {feature: {"win_rate", "wins", "losses",
                                                   "no_difference"}}}},   # Table 2
     "agreement": {"units_judged_twice": n,
                   "cooccurrence": [{"system", "label", "pairs_with_label", "pairs_both",
                                     "share"}],                            # Table 3
                   "krippendorff": {"nominal": {"alpha", "low", "high", "units"},
                                    "ordinal": {"alpha"}} | null},
     "stability": {"n_conversations": [n, ...], "share_reproduced": [...],
                   "reproduced_low": [...], "reproduced_high": [...],   # 95% Wilson
                   "share_modal": [...], "reference": [[slug, ...], ...],
                   "subsamples",                # the most subsamples per point
                   "subsamples_drawn": [n, ...],  # drawn per point, 50 at a time until
                   "precision",                 # its interval is within ±precision
                   "replicates",
                   "leave_one_out": [{"left_out", "n_conversations", "share_reproduced",
                                      "reproduced_low", "reproduced_high",
                                      "subsamples_drawn", "keeps_full_ranking"}]}
                 | {} | null,                   # null: still being computed (below)
     "scores": {system: {"judged", "human", "unsure", "bot", "share_human",
                         "ci": [lo, hi], "conversations", "self_play_judged"}},
                                                # Spot The Bot: how often each system's
                                                # speakers were taken for human
     "partners": [{"system", "wins", "losses", "ties", "win_rate", "judged",
                   "share_human", "ci": [lo, hi],
                   "against": [{"target", "target_wins", "partner_wins", "ties",
                                "p_value", "p_adjusted"}]}],
                                                # bipartite-play partners, never ranked
     "warnings": [text, ...]}

``stability`` is ``null`` while a run's stability part is computed: a Spot The Bot run
stores its report first and the stability curve (hundreds of TrueSkill bootstraps of
subsamples, seconds to minutes) as a part of its own, as the plots are drawn; the run's
provenance says how far that part is (``"run": {..., "stability": "pending" | "running" |
"done" | "failed" | null}``, ``null``: the section came with the report). When the part is
done the section is filled in and its warnings are appended to ``warnings``: the result is
then the one the report computed with its stability would have.

For an A/B tournament ``survival`` has empty lists and maps, ``features`` is empty,
``stability`` is ``{}``, ``agreement`` has Krippendorff's alpha of the choices over items
judged more than once, and ``automatic_ties`` counts the identical-response items, each of
which is counted as a tie from every one of the campaign's ``redundancy`` judges.

The A/B report also has ``chateval`` (``analysis.reports.chateval``). Campaigns of kinds
``abc_eval``, ``likert`` and ``comparative`` and imported studies have reports of their own
(``abc_eval``, ``likert``, ``comparative``, ``study``: each module documents its contract;
all start with ``{"subject", "kind", "systems", "judgments"}`` and end with ``"warnings"``).
An automatic judge run beside a campaign's humans has ``human_vs_automatic``. A ``ranking``
campaign's report (``ranking``) has ``plackett_luce``, rows shaped as ``bradley_terry``'s.

Sources: Deriu et al. (2020), "Spot The Bot", sections 3.2-3.3 and 4 (win function,
Equation 1, TrueSkill clusters, survival analysis, Tables 2-3, stability); the pairwise and
survival tests are corrected with Holm's procedure by default (``correction``).
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module

from analysis.reports.data import (
    HUMAN,
    ABData,
    BehaviourData,
    ComparativeData,
    HumanVsAutomaticData,
    LikertData,
    NothingToAnalyse,
    RankingData,
    SpotTheBotData,
    StudyData,
)
from analysis.reports.jsonable import Progress, canonical_digest, json_safe
from analysis.runs.parameters import DEFAULT_PARAMETERS, normalize_parameters

__all__ = [
    "DEFAULT_PARAMETERS",
    "HUMAN",
    "ABData",
    "BehaviourData",
    "ComparativeData",
    "HumanVsAutomaticData",
    "LikertData",
    "NothingToAnalyse",
    "RankingData",
    "SpotTheBotData",
    "StudyData",
    "build_report",
    "build_stability",
    "canonical_digest",
    "json_safe",
    "normalize_parameters",
]


def build_report(
    data: SpotTheBotData
    | ABData
    | BehaviourData
    | LikertData
    | ComparativeData
    | StudyData
    | HumanVsAutomaticData
    | RankingData,
    parameters: Mapping | None = None,
    progress: Progress | None = None,
    *,
    stability: bool = True,
) -> dict:
    """The result contract (module docstring) for these inputs, JSON-safe.

    ``progress`` is called with a short description before each stage. Without
    ``stability`` a Spot The Bot report leaves its stability section out (``None``, unless
    there is nothing to compute) for ``build_stability`` to compute apart. Raises
    NothingToAnalyse when there is nothing to rank, ValueError for bad parameters.
    """
    params = normalize_parameters(parameters)
    report = _function(REPORTS, data)
    if not stability and type(data) in STABILITY_PARTS:
        return json_safe(_warn_if_too_few(report(data, params, progress, stability=False)))
    return json_safe(_warn_if_too_few(report(data, params, progress)))


def build_stability(data: SpotTheBotData, parameters: Mapping | None = None) -> dict:
    """``{"stability": section, "warnings": [...]}``: the stability section a report built
    without it (``build_report(..., stability=False)``) lacks, and the warnings to append
    to the report's, JSON-safe. The report with both is the report built with its
    stability."""
    params = normalize_parameters(parameters)
    section, warnings = _function(STABILITY_PARTS, data)(data, params)
    return json_safe({"stability": section, "warnings": warnings})


def _function(table: dict, data):
    where = table.get(type(data))
    if where is None:
        raise TypeError(f"cannot analyse {type(data).__name__}")
    module, function = where
    # The one report module this kind needs, imported on its first report, not with this
    # package: the report modules import ``evalstats`` and through some of them
    # ``scipy.stats`` (half a second or more), and this package is loaded at app start-up
    # (signals, views, the ``analyze`` command) by every process, most of which never build
    # a report; a Spot The Bot report needs no scipy.stats at all.
    return getattr(import_module(f"{__name__}.{module}"), function)


MIN_JUDGMENTS_FOR_INTERVALS = 2
TOO_FEW_FOR_INTERVALS = (
    "Too few judgments for intervals: one judgment says nothing of its own uncertainty, so "
    "the intervals below are missing or of zero width. Collect more before reading them."
)


def _warn_if_too_few(result: dict) -> dict:
    if 0 < result.get("judgments", 0) < MIN_JUDGMENTS_FOR_INTERVALS:
        # Every interval of every kind resamples (or divides by) more than one judgment:
        # from a single one it is missing or of zero width, which is no evidence at all.
        result["warnings"] = [TOO_FEW_FOR_INTERVALS, *result.get("warnings", [])]
    return result


# Each kind of input: the module of this package that reports on it, and its function.
REPORTS = {
    SpotTheBotData: ("spot_the_bot", "spot_the_bot_report"),
    ABData: ("ab", "ab_report"),
    BehaviourData: ("abc_eval", "abc_eval_report"),
    LikertData: ("likert", "likert_report"),
    ComparativeData: ("comparative", "comparative_report"),
    StudyData: ("study", "study_report"),
    HumanVsAutomaticData: ("human_vs_automatic", "human_vs_automatic_report"),
    RankingData: ("ranking", "ranking_report"),
}

# The kinds whose stability section can be computed apart from the rest of the report.
STABILITY_PARTS = {SpotTheBotData: ("spot_the_bot", "spot_the_bot_stability")}
