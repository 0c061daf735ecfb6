"""Human versus automatic: one automatic judge run measured against a campaign's humans.

Pure, like every report: ``HumanVsAutomaticData`` (``analysis.inputs.automatic`` fills it
from the database; ``analysis.inputs.comparable`` says what a payload of each kind yields) in, the
result contract out, computed by ``evalstats.judges``. For every dimension of the
campaign's kind (Likert dimensions, ABC-Eval behaviours, comparative dimensions, Spot The
Bot's label and features, A/B's choice):

* **agreement per item**, on the units both humans and the judge labelled: Cohen's kappa
  between the judge and the human majority (items whose human labels tie are left out;
  Likert weighted by ``judge_kappa_weights``), and Krippendorff's alpha of the humans alone
  and with the judge as one more coder (nominal; ordinal for Likert), both on the same
  units: those with two human labels or more (``alpha_units``);
* **system rankings**: each system's mean score over its conversations, by the humans and
  by the judge; Spearman's rho and Kendall's tau-b between them on the conversations both
  scored, with percentile bootstrap intervals (``coverage``) resampling conversations within
  each system (``judge_resamples``);
* **convergence** (bipartite-play, Sato et al. 2022, section 6.1): the correlation of the
  judge's ranking from n random dialogues per system with the humans' ranking on all of
  theirs (with the judge's own ranking on all its dialogues while no human has judged:
  ``convergence_target``), for n on a grid from 1 to the fewest dialogues the judge scored for a system
  (``convergence_points`` sizes, ``convergence_repeats`` subsets each; mean and 2.5-97.5
  percentiles).

Bipartite-play partners are never ranked (they are the fixed opponents; the rankings hold
the targets only); their speakers' labels still count for agreement.

An arena's judge run (``task_kind`` "arena"): the units are battles, each with one human
label (the vote) mapped as ``analysis.inputs.arena_versus`` documents, so kappa is Cohen's
kappa of the judge with the votes, ``raw_agreement`` the share of battles where the verdict
is the vote, the system means are win rates (ties count a half), and ``bradley_terry`` holds
the Bradley-Terry ratings of the same battles by the votes and by the judge (the arena's
leaderboard scale) with the rank correlation of the two (``evalstats.judges.
bradley_terry_comparison``). Alpha needs two human labels per unit, which a battle never
has: it is null, without a warning. ``bradley_terry`` is null for campaigns.

The human analyses never see the judge: this report is the one place where the two meet.
A judge run on a campaign no human has judged yet is reported alone (its ranking and its
convergence), so that a tournament scored only automatically has a ranking too.

Result contract
---------------
::

    {"subject": campaign slug, "kind": "human_vs_automatic", "task_kind": kind,
     "judge": {"run": id, "label": text},
     "systems": [slug, ...],                  # ranked targets, by the humans on the first
                                              # dimension (by the judge where no human scored)
     "partners": [slug, ...],                 # bipartite-play: never ranked
     "judgments": n, "automatic_judgments": n,
     "dimensions": [
        {"dimension", "level": "nominal" | "ordinal",
         "agreement": {"units", "kappa", "raw_agreement", "kappa_weights", "kappa_units",
                       "tied_majority", "alpha_humans", "alpha_with_judge",
                       "alpha_units"},        # raw_agreement: share of kappa's units where
                                              # the judge's label is the majority's
         "systems": [{"system", "human_mean", "human_conversations", "human_rank",
                      "judge_mean", "judge_conversations", "judge_rank"}],
                                              # ranks: 1 = highest mean score; tied means
                                              # share their average rank
         "correlation": {"spearman", "spearman_low", "spearman_high", "kendall",
                         "kendall_low", "kendall_high", "systems", "conversations",
                         "confidence_level", "resamples"} | null,
         "convergence_target": "human" | "judge" | null,
         "convergence": [{"n_dialogues", "spearman_mean", "spearman_low", "spearman_high",
                          "kendall_mean", "kendall_low", "kendall_high", "repeats"}]}],
     "bradley_terry": {"battles", "spearman", "kendall",
                       "systems": [{"system", "human_rating", "human_rank", "judge_rating",
                                    "judge_rank"}]} | null,   # arenas only
     "warnings": [text, ...]}

Each figure is computed once: a system's means are :func:`evalstats.judges.system_mean` over
the conversations both humans and the judge scored (``*_conversations`` counts them), the
numbers the correlation uses, so the ranks, the means and Spearman's and Kendall's
coefficients shown agree (scipy on the shown means gives the shown coefficients, ties
included). A system only one side scored, or with no conversation both scored, has its
means over each side's own conversations and stays out of the correlation.
"""

from __future__ import annotations

import warnings as warnings_module
from collections import defaultdict
from collections.abc import Mapping

import numpy as np
from scipy import stats

from analysis.inputs.comparable import LIKERT_SCALE
from analysis.reports.common import Progress, report_progress
from analysis.reports.data import HumanVsAutomaticData, NothingToAnalyse
from evalstats.judges import (
    alpha_with_judge,
    bradley_terry_comparison,
    convergence,
    kappa_with_majority,
    ranking_correlation,
    system_mean,
)
from evalstats.pairwise import A_WINS, B_WINS, TIE

__all__ = ["convergence_sizes", "human_vs_automatic_report"]

MAIN_DIMENSIONS = ("label", "choice")
ARENA = "arena"


def convergence_sizes(smallest: int, points: int) -> list[int]:
    """``points`` dialogue counts from 1 to ``smallest``, evenly spaced on a log scale
    (the curve changes fastest at the start), distinct and increasing."""
    if smallest < 1:
        return []
    grid = np.geomspace(1, smallest, num=max(points, 1)) if points > 1 else [smallest]
    return sorted({int(round(n)) for n in grid})


def _agreement(human, judge, level: str, weights: str) -> tuple[dict, list[str]]:
    """Kappa with the human majority and alpha with the judge, on one dimension's units."""
    by_unit: dict[str, dict[int, object]] = defaultdict(dict)
    for unit, worker, value in human:
        by_unit[unit][worker] = value
    judged = dict(judge)
    shared = sorted(set(by_unit) & set(judged))
    warnings = []
    kappa_weights = None if level == "nominal" or weights == "none" else weights
    majority = kappa_with_majority(
        {u: list(by_unit[u].values()) for u in shared},
        {u: judged[u] for u in shared},
        labels=LIKERT_SCALE if level == "ordinal" else None,
        weights=kappa_weights,
    )
    alpha_humans = alpha_judge = None
    alpha_units = 0
    # Alpha depends on which values share a unit, not on who gave them: the k-th human label
    # of each unit goes in row k, so the matrix has as many rows as the most labels a unit
    # got, not one per crowdworker (who may be thousands).
    slots = {u: dict(enumerate(by_unit[u].values())) for u in shared}
    try:
        alpha = alpha_with_judge(slots, {u: judged[u] for u in shared}, level)
    except ValueError:
        warnings.append("no unit has two human labels: Krippendorff's alpha needs them")
    else:
        alpha_humans = alpha.humans.statistic
        alpha_judge = alpha.with_judge.statistic
        alpha_units = alpha.n_items
    return (
        {
            "units": len(shared),
            "kappa": majority.kappa.statistic,
            "raw_agreement": majority.observed,
            "kappa_weights": kappa_weights or "none",
            "kappa_units": majority.kappa.n_items,
            "tied_majority": majority.n_tied_majority,
            "alpha_humans": alpha_humans,
            "alpha_with_judge": alpha_judge,
            "alpha_units": alpha_units,
        },
        warnings,
    )


def _per_conversation(rows) -> dict[str, dict[str, float]]:
    """system -> {conversation: mean score over the judgments of that conversation}."""
    collected: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for system, conversation, score in rows:
        collected[system][conversation].append(float(score))
    return {
        system: {c: float(np.mean(v)) for c, v in conversations.items()}
        for system, conversations in collected.items()
    }


def _ranks(means: Mapping[str, float]) -> dict[str, float]:
    """1 = highest mean; ties share their average rank."""
    systems = sorted(means)
    ranks = stats.rankdata([-means[s] for s in systems])
    return {s: float(r) for s, r in zip(systems, ranks, strict=True)}


def _shared(human, judge) -> dict[str, set]:
    """Per system both sides scored, the conversations both scored (when there are any)."""
    return {
        s: set(human[s]) & set(judge[s])
        for s in set(human) & set(judge)
        if set(human[s]) & set(judge[s])
    }


def _system_rows(human, judge) -> list[dict]:
    """The table: per system its means (once, as the correlation uses them) and ranks."""
    shared = _shared(human, judge)

    def means(side) -> dict[str, tuple[float, int]]:
        return {
            s: (
                system_mean(side[s][c] for c in shared.get(s, side[s])),
                len(shared.get(s, side[s])),
            )
            for s in side
        }

    human_means, judge_means = means(human), means(judge)
    human_ranks = _ranks({s: m for s, (m, _) in human_means.items()})
    judge_ranks = _ranks({s: m for s, (m, _) in judge_means.items()})
    systems = sorted(
        set(human) | set(judge),
        key=lambda s: (human_ranks.get(s, np.inf), judge_ranks.get(s, np.inf), s),
    )
    return [
        {
            "system": s,
            "human_mean": human_means[s][0] if s in human_means else None,
            "human_conversations": human_means[s][1] if s in human_means else 0,
            "human_rank": human_ranks.get(s),
            "judge_mean": judge_means[s][0] if s in judge_means else None,
            "judge_conversations": judge_means[s][1] if s in judge_means else 0,
            "judge_rank": judge_ranks.get(s),
        }
        for s in systems
    ]


def _correlation(human, judge, params) -> tuple[dict | None, list[str]]:
    shared = _shared(human, judge)
    if len(shared) < 2:
        return None, ["fewer than two systems have conversations scored by both: no correlation"]
    with warnings_module.catch_warnings():
        # Resamples without variation give NaN bounds, which the warnings below explain.
        warnings_module.simplefilter("ignore", stats.DegenerateDataWarning)
        result = ranking_correlation(
            {s: human[s] for s in shared},
            {s: judge[s] for s in shared},
            confidence_level=params["coverage"],
            n_resamples=params["judge_resamples"],
            rng=params["seed"],
        )
    warnings = []
    if np.isnan(result.spearman):
        warnings.append("every system has the same mean score on one side: no correlation")
    elif np.isnan(result.spearman_low):
        warnings.append("a system has one conversation scored by both: no bootstrap interval")
    return (
        {
            "spearman": result.spearman,
            "spearman_low": result.spearman_low,
            "spearman_high": result.spearman_high,
            "kendall": result.kendall,
            "kendall_low": result.kendall_low,
            "kendall_high": result.kendall_high,
            "systems": len(result.systems),
            "conversations": sum(len(c) for c in shared.values()),
            "confidence_level": result.confidence_level,
            "resamples": result.n_resamples,
        },
        warnings,
    )


def _convergence(human, judge, params) -> tuple[str | None, list[dict]]:
    """(the target ranking's source, the curve): the humans' ranking when at least two of
    the judge's systems have one, else the judge's own ranking on all its dialogues (how
    many dialogues the automatic ranking needs to settle, as the paper measured it)."""
    target_from = "human" if len(set(human) & set(judge)) >= 2 else "judge"
    source = human if target_from == "human" else judge
    target = {s: system_mean(c.values()) for s, c in source.items()}
    scores = {s: list(c.values()) for s, c in judge.items() if s in target}
    if len(scores) < 2:
        return None, []
    sizes = convergence_sizes(min(len(v) for v in scores.values()), params["convergence_points"])
    points = convergence(
        scores, target, sizes, n_repeats=params["convergence_repeats"], rng=params["seed"]
    )
    return target_from, [
        {
            "n_dialogues": p.n_dialogues,
            "spearman_mean": p.spearman_mean,
            "spearman_low": p.spearman_low,
            "spearman_high": p.spearman_high,
            "kendall_mean": p.kendall_mean,
            "kendall_low": p.kendall_low,
            "kendall_high": p.kendall_high,
            "repeats": p.n_repeats,
        }
        for p in points
    ]


def _group(rows, width: int) -> dict[str, list[tuple]]:
    """Rows by their first field (the dimension), the rest kept."""
    grouped: dict[str, list[tuple]] = defaultdict(list)
    for row in rows:
        grouped[row[0]].append(tuple(row[1:width]))
    return grouped


def human_vs_automatic_report(
    data: HumanVsAutomaticData, params: Mapping, progress: Progress | None = None
) -> dict:
    """The result contract (module docstring) of one judge run against the humans."""
    if data.is_empty():
        raise NothingToAnalyse("The judge has judged no item yet.")
    partners = set(data.partners)
    human_labels, judge_labels = _group(data.human_labels, 4), _group(data.judge_labels, 3)
    human_scores = _group([r for r in data.human_scores if r[1] not in partners], 4)
    judge_scores = _group([r for r in data.judge_scores if r[1] not in partners], 4)
    # The kind's main question first (Spot The Bot's label, A/B's choice), then by name.
    dimensions = sorted(
        set(human_labels) | set(judge_labels) | set(human_scores),
        key=lambda d: (d not in MAIN_DIMENSIONS, d),
    )
    humans_judged = bool(data.human_labels)
    warnings: list[str] = (
        []
        if humans_judged
        else ["no human judgments yet: the judge's ranking alone, without agreement"]
    )
    sections = []
    for dimension in dimensions:
        report_progress(progress, f"Comparing {dimension}")
        agreement, notes = _agreement(
            human_labels.get(dimension, []),
            judge_labels.get(dimension, []),
            data.level,
            params["judge_kappa_weights"],
        )
        human = _per_conversation(human_scores.get(dimension, []))
        judge = _per_conversation(judge_scores.get(dimension, []))
        correlation, more = _correlation(human, judge, params)
        if data.task_kind == ARENA:  # one vote per battle: alpha is never defined
            notes = [n for n in notes if "Krippendorff" not in n]
        if humans_judged:
            warnings += [f"{dimension}: {note}" for note in notes + more]
        target_from, curve = _convergence(human, judge, params)
        sections.append(
            {
                "dimension": dimension,
                "level": data.level,
                "agreement": agreement,
                "systems": _system_rows(human, judge),
                "correlation": correlation,
                "convergence_target": target_from,
                "convergence": curve,
            }
        )
    ranked = sections[0]["systems"] if sections else []
    bradley_terry = None
    if data.task_kind == ARENA:
        report_progress(progress, "Fitting Bradley-Terry ratings")
        bradley_terry, more = _bradley_terry(data)
        warnings += more
    return {
        "subject": data.subject,
        "kind": data.kind,
        "task_kind": data.task_kind,
        "judge": {"run": data.judge_run, "label": data.judge},
        "systems": [row["system"] for row in ranked],
        "partners": sorted(partners),
        "judgments": data.human_judgments,
        "automatic_judgments": data.automatic_judgments,
        "dimensions": sections,
        "bradley_terry": bradley_terry,
        "warnings": warnings,
    }


def _bradley_terry(data: HumanVsAutomaticData) -> tuple[dict | None, list[str]]:
    """The ratings of the battles both the votes and the judge labelled, by each."""
    judged = {unit: value for _, unit, value in data.judge_labels}
    voted = {unit: value for _, unit, _, value in data.human_labels}
    rows = [(unit, a, b) for unit, a, b in data.battles if unit in judged and unit in voted]
    systems = sorted({s for _, a, b in rows for s in (a, b)})
    if len(systems) < 2:
        return None, ["fewer than two systems in battles judged by both: no Bradley-Terry ratings"]
    index = {s: i for i, s in enumerate(systems)}
    code = {"a": A_WINS, "b": B_WINS, "tie": TIE}
    result = bradley_terry_comparison(
        [index[a] for _, a, _ in rows],
        [index[b] for _, _, b in rows],
        [code[voted[unit]] for unit, _, _ in rows],
        [code[judged[unit]] for unit, _, _ in rows],
        len(systems),
        labels=systems,
    )
    human = dict(zip(systems, result.human_ratings.tolist(), strict=True))
    judge = dict(zip(systems, result.judge_ratings.tolist(), strict=True))
    human_ranks, judge_ranks = _ranks(human), _ranks(judge)
    ordered = sorted(systems, key=lambda s: (human_ranks[s], judge_ranks[s], s))
    return (
        {
            "battles": result.n_battles,
            "spearman": result.spearman,
            "kendall": result.kendall,
            "systems": [
                {
                    "system": s,
                    "human_rating": human[s],
                    "human_rank": human_ranks[s],
                    "judge_rating": judge[s],
                    "judge_rank": judge_ranks[s],
                }
                for s in ordered
            ],
        },
        [f"Bradley-Terry: {w}" for w in result.warnings],
    )
