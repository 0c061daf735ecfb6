"""The analysis of one tournament: plain arrays in, the result contract (JSON) out.

Pure: numpy and ``analysis.stats`` only, no Django and no I/O, so the same function serves
the Celery task, the ``analyze`` command and the tests. ``analysis.inputs`` turns the
database into the dataclasses below; ``build_report`` does the rest.

Result contract
---------------
Every number is a JSON number or ``null`` (NaN and infinities become ``null``)::

    {"tournament": slug, "kind": "spot_the_bot" | "ab",
     "systems": [slug, ...],                    # best first (TrueSkill order)
     "judgments": n,                            # judgments by workers that were analysed
     "pairwise": [{"a", "b", "wins_a", "wins_b", "ties", "win_rate_a",
                   "p_value", "p_adjusted"}],   # a ranked above b; p: binomial (or
                                                # chi-square) test of wins vs losses,
                                                # p_adjusted: Holm over the pairs
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
                   "share_modal": [...], "reference": [[slug, ...], ...],
                   "subsamples", "replicates", "leave_one_out": [...]} | {},
     "warnings": [text, ...]}

For an A/B tournament ``survival`` has empty lists and maps, ``features`` is empty,
``stability`` is ``{}``, ``agreement`` has Krippendorff's alpha of the choices over items
judged more than once, and ``automatic_ties`` counts the identical-response items, each of
which is counted as a tie from every one of the campaign's ``redundancy`` judges.

Sources: Deriu et al. (2020), "Spot The Bot", sections 3.2-3.3 and 4 (win function,
Equation 1, TrueSkill clusters, survival analysis, Tables 2-3, stability); the pairwise and
survival tests are corrected with Holm's procedure by default (``correction``).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass

import numpy as np

from analysis.stats import pairwise as pw
from analysis.stats import trueskill as ts
from analysis.stats.agreement import (
    EntityJudgment,
    krippendorff_alpha,
    krippendorff_alpha_bca,
    label_cooccurrence_agreement,
)
from analysis.stats.bradley_terry import bradley_terry_from_judgments
from analysis.stats.stability import leave_one_out_stability, ranking_stability
from analysis.stats.survival import (
    interval_cox_ph,
    interval_logrank_test,
    pairwise_interval_logrank,
    spot_the_bot_intervals,
    turnbull_by_group,
)

__all__ = [
    "DEFAULT_PARAMETERS",
    "HUMAN",
    "ABData",
    "NothingToAnalyse",
    "SpotTheBotData",
    "build_report",
    "canonical_digest",
    "json_safe",
    "normalize_parameters",
]

HUMAN = "human"

#: Every parameter of a run, with its default. ``exclude_blocked`` is applied when the
#: inputs are loaded; the others steer the statistics.
DEFAULT_PARAMETERS: dict[str, object] = {
    "exclude_blocked": False,
    "seed": 0,
    "replicates": 1000,  # TrueSkill bootstrap replicates (rank ranges, clusters)
    "bt_bootstrap": 1000,  # Bradley-Terry bootstrap replicates
    "coverage": 0.95,  # share of replicate ranks a rank range keeps; also the BT CI level
    "correction": "holm",
    "pair_test": "binomial",
    "alpha_resamples": 2000,  # BCa resamples for Krippendorff's alpha
    "stability_points": 4,  # grid points of conversations per pair
    "stability_subsamples": 10,
    "stability_replicates": 40,  # 40 keeps exactly the central 95% (drops 1 each side)
    "leave_one_out": False,
}
_CHOICES = {
    "correction": ("holm", "bonferroni", "none"),
    "pair_test": ("binomial", "chi-square"),
}
_POSITIVE_INTS = (
    "replicates",
    "bt_bootstrap",
    "alpha_resamples",
    "stability_points",
    "stability_subsamples",
    "stability_replicates",
)
# Label codes ordered bot < unsure < human, as the win function and the ordinal alpha use.
_LABEL_CODE = {"bot": pw.BOT, "unsure": pw.UNSURE, "human": pw.HUMAN}
_AB_OUTCOME = {"a": pw.A_WINS, "b": pw.B_WINS, "tie": pw.TIE}
# pairwise codes (a=0, b=1, tie=-1) to trueskill codes (a=+1, b=-1, draw=0)
_TO_TRUESKILL = {pw.A_WINS: ts.A_WINS, pw.B_WINS: ts.B_WINS, pw.TIE: ts.DRAW}
_SIGNIFICANCE = 0.05

Progress = Callable[[str], None]


class NothingToAnalyse(ValueError):
    """The inputs hold no judgment that the analysis could use."""


@dataclass(frozen=True)
class SpotTheBotData:
    """Spot The Bot judgments, one entry per (judgment, speaker), ordered by judgment.

    ``system``/``opponent`` are system slugs or ``"human"``; ``label``/``opponent_label``
    are ``"human"``, ``"bot"`` or ``"unsure"``; ``preferences[i][f]`` is +1 if this speaker
    was better on ``features[f]``, 0 for no difference, -1 if the other speaker was.
    ``worker`` ids only tell judges apart (agreement); they never reach the result.
    """

    subject: str
    features: tuple[str, ...]
    judgment: tuple[int, ...]
    worker: tuple[int, ...]
    conversation: tuple[str, ...]
    speaker: tuple[int, ...]
    system: tuple[str, ...]
    opponent: tuple[str, ...]
    exchanges: tuple[int, ...]
    label: tuple[str, ...]
    opponent_label: tuple[str, ...]
    preferences: tuple[tuple[int, ...], ...]
    kind: str = "spot_the_bot"


@dataclass(frozen=True)
class ABData:
    """A/B judgments, one entry per judgment (or automatic tie), ordered by item.

    ``choice`` is ``"a"``, ``"b"`` or ``"tie"``; ``worker`` is -1 for automatic ties, which
    ``automatic_weight`` repeats (the campaign's redundancy) so that an item with identical
    responses weighs like an item every judge called a tie.
    """

    subject: str
    item: tuple[int, ...]
    worker: tuple[int, ...]
    system_a: tuple[str, ...]
    system_b: tuple[str, ...]
    choice: tuple[str, ...]
    automatic: tuple[bool, ...]
    automatic_weight: int = 1
    kind: str = "ab"


# --- parameters, digests, JSON ----------------------------------------------------------------


def normalize_parameters(parameters: Mapping | None = None) -> dict:
    """The full parameter set: defaults filled in, types checked; ValueError if wrong."""
    given = dict(parameters or {})
    unknown = sorted(set(given) - set(DEFAULT_PARAMETERS))
    if unknown:
        raise ValueError(f"unknown analysis parameter(s): {', '.join(unknown)}")
    merged = {**DEFAULT_PARAMETERS, **given}
    merged["exclude_blocked"] = bool(merged["exclude_blocked"])
    merged["leave_one_out"] = bool(merged["leave_one_out"])
    for name in (*_POSITIVE_INTS, "seed"):
        value = merged[name]
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{name} must be a whole number, got {value!r}")
        if name != "seed" and value < 1:
            raise ValueError(f"{name} must be at least 1, got {value}")
    coverage = merged["coverage"]
    if isinstance(coverage, bool) or not isinstance(coverage, int | float):
        raise ValueError(f"coverage must be a number, got {coverage!r}")
    if not 0 < coverage < 1:
        raise ValueError(f"coverage must be between 0 and 1, got {coverage}")
    merged["coverage"] = float(coverage)
    for name, allowed in _CHOICES.items():
        if merged[name] not in allowed:
            raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {merged[name]!r}")
    return merged


def canonical_digest(value) -> str:
    """sha256 of the canonical JSON of a dataclass or JSON-like value (sorted keys)."""
    if hasattr(value, "__dataclass_fields__"):
        value = asdict(value)
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


def json_safe(value):
    """The value with numpy types made plain and NaN/infinity replaced by None."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, np.ndarray):
        return [json_safe(v) for v in value.tolist()]
    if isinstance(value, np.bool_ | bool):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        return float(value) if math.isfinite(value) else None
    return value


def _report_progress(progress: Progress | None, text: str) -> None:
    if progress is not None:
        progress(text)


# --- shared pieces ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Matches:
    """Decisive-or-tied comparisons between two systems (indices into ``names``)."""

    names: list[str]
    a: np.ndarray
    b: np.ndarray
    outcome: np.ndarray  # pairwise codes
    conversation: np.ndarray  # what the stability analysis subsamples


def _ranking_section(matches: _Matches, params: dict, warnings: list[str]):
    """Pairwise table, TrueSkill clusters and Bradley-Terry fit, oriented best first."""
    n = len(matches.names)
    pairwise = pw.pairwise_comparison(
        matches.a,
        matches.b,
        matches.outcome,
        n,
        test=params["pair_test"],
        correction=params["correction"],
    )
    ts_outcome = np.vectorize(_TO_TRUESKILL.get, otypes=[np.int8])(matches.outcome)
    bootstrap = None
    try:
        bootstrap = ts.trueskill_bootstrap(
            matches.a,
            matches.b,
            ts_outcome,
            n_players=n,
            n_replicates=params["replicates"],
            seed=params["seed"],
            coverage=params["coverage"],
        )
    except ValueError as error:
        warnings.append(f"No TrueSkill ranking: {error}.")
    order = (
        [int(p) for p in bootstrap.order]
        if bootstrap is not None
        else sorted(range(n), key=lambda i: (-_nan_low(pairwise.system_win_rate[i]), i))
    )
    position = {system: rank for rank, system in enumerate(order)}
    ranking = []
    if bootstrap is not None:
        for p in order:
            ranking.append(
                {
                    "system": matches.names[p],
                    "win_rate": pairwise.system_win_rate[p],
                    "mu": bootstrap.mean_mu[p],
                    "sigma": float(bootstrap.sigma[:, p].mean()),
                    "rank_range": [int(bootstrap.rank_lower[p]), int(bootstrap.rank_upper[p])],
                    "cluster": int(bootstrap.cluster[p]),
                }
            )
    pairs = []
    for k, (i, j) in enumerate(pairwise.pairs):
        i, j = int(i), int(j)
        wins_i, wins_j, rate_i = pairwise.wins_a[k], pairwise.wins_b[k], pairwise.win_rate_a[k]
        if position[j] < position[i]:
            i, j, wins_i, wins_j, rate_i = j, i, wins_j, wins_i, 1.0 - rate_i
        pairs.append(
            {
                "a": matches.names[i],
                "b": matches.names[j],
                "wins_a": int(wins_i),
                "wins_b": int(wins_j),
                "ties": int(pairwise.ties[k]),
                "win_rate_a": rate_i,
                "p_value": pairwise.p_value[k],
                "p_adjusted": pairwise.p_adjusted[k],
            }
        )
    place = {matches.names[p]: rank for p, rank in position.items()}
    pairs.sort(key=lambda row: (place[row["a"]], place[row["b"]]))
    bt = bradley_terry_from_judgments(
        matches.a,
        matches.b,
        matches.outcome,
        n,
        n_bootstrap=params["bt_bootstrap"],
        confidence=params["coverage"],
        seed=params["seed"],
        labels=matches.names,
    )
    warnings.extend(f"Bradley-Terry: {message}" for message in bt.warnings)
    bradley_terry = sorted(
        (
            {
                "system": matches.names[p],
                "rating": bt.ratings[p],
                "ci": [bt.confidence_interval.low[p], bt.confidence_interval.high[p]],
                "rank": int(bt.ranks[p]),
            }
            for p in range(n)
        ),
        key=lambda row: (row["rank"], -row["rating"]),
    )
    return [matches.names[p] for p in order], pairs, ranking, bradley_terry


def _nan_low(value: float) -> float:
    return -math.inf if math.isnan(value) else value


def _stability_section(matches: _Matches, params: dict, warnings: list[str]) -> dict:
    """How often subsamples of n conversations per pair reproduce the cluster ranking."""
    pair_id = np.array(
        [f"{min(x, y)}|{max(x, y)}" for x, y in zip(matches.a, matches.b, strict=True)]
    )
    per_pair = defaultdict(set)
    for pair, conversation in zip(pair_id, matches.conversation, strict=True):
        per_pair[pair].add(conversation)
    if len(per_pair) < 2:
        warnings.append("No stability analysis: it needs at least two pairs of systems.")
        return {}
    # Pairs never compared (e.g. bipartite-play) are simply absent from every subsample.
    fewest = min(len(c) for c in per_pair.values())
    if fewest < 2:
        warnings.append("No stability analysis: a pair of systems has a single conversation.")
        return {}
    grid = sorted(
        {int(round(x)) for x in np.linspace(1, fewest, params["stability_points"] + 1)[1:]}
    )
    ts_outcome = np.vectorize(_TO_TRUESKILL.get, otypes=[np.int8])(matches.outcome)
    options = {
        "n_subsamples": params["stability_subsamples"],
        "n_replicates": params["stability_replicates"],
        "reference_replicates": params["replicates"],
        "seed": params["seed"],
        "coverage": params["coverage"],
    }
    args = (matches.a, matches.b, ts_outcome, matches.conversation, pair_id, grid)
    try:
        result = ranking_stability(*args, **options)
    except ValueError as error:
        warnings.append(f"No stability analysis: {error}.")
        return {}
    section = {
        "n_conversations": result.n_conversations,
        "share_reproduced": result.share_reproduced,
        "share_modal": result.share_modal,
        "reference": [[matches.names[p] for p in cluster] for cluster in result.reference],
        "subsamples": result.n_subsamples,
        "replicates": result.n_replicates,
        "leave_one_out": [],
    }
    if params["leave_one_out"] and len(matches.names) > 2:
        for entry in leave_one_out_stability(*args, **options):
            section["leave_one_out"].append(
                {
                    "left_out": matches.names[entry.left_out],
                    "n_conversations": entry.stability.n_conversations,
                    "share_reproduced": entry.stability.share_reproduced,
                    "keeps_full_ranking": entry.keeps_full_ranking,
                }
            )
    return section


def _alpha_section(units: Mapping[object, list[int]], params: dict, warnings: list[str]):
    """Krippendorff's alpha over units coded at least twice (slots x units matrix).

    Rows are "first, second, ... value of the unit", not workers: alpha only pairs values
    within a unit from different coders, so the slot a value sits in does not matter, and the
    matrix stays (redundancy x units) however many workers there are.
    """
    coded = [values for values in units.values() if len(values) >= 2]
    if len(coded) < 2:
        return None
    width = max(len(values) for values in coded)
    matrix = np.full((width, len(coded)), np.nan)
    for column, values in enumerate(coded):
        matrix[: len(values), column] = values
    nominal = krippendorff_alpha(matrix, "nominal")
    if math.isnan(nominal.statistic):
        return {
            "nominal": {"alpha": None, "low": None, "high": None, "units": len(coded)},
            "ordinal": {"alpha": None},
        }
    interval = krippendorff_alpha_bca(
        matrix, "nominal", n_resamples=params["alpha_resamples"], rng=params["seed"]
    )
    if interval.n_undefined_resamples:
        warnings.append(
            f"Krippendorff's alpha: {interval.n_undefined_resamples} resamples without "
            "variation, no interval."
        )
    return {
        "nominal": {
            "alpha": nominal.statistic,
            "low": interval.low,
            "high": interval.high,
            "units": len(coded),
        },
        "ordinal": {"alpha": krippendorff_alpha(matrix, "ordinal").statistic},
    }


# --- Spot The Bot -----------------------------------------------------------------------------


def _spot_the_bot(data: SpotTheBotData, params: dict, progress: Progress | None) -> dict:
    warnings: list[str] = []
    n_rows = len(data.judgment)
    if n_rows == 0:
        raise NothingToAnalyse("no Spot The Bot judgment to analyse")
    system = np.array(data.system, dtype=object)
    opponent = np.array(data.opponent, dtype=object)
    speaker = np.array(data.speaker)
    exchanges = np.array(data.exchanges, dtype=np.int64)
    codes = np.array([_LABEL_CODE[label] for label in data.label], dtype=np.int64)
    opponent_codes = np.array([_LABEL_CODE[label] for label in data.opponent_label])
    preferences = np.array(data.preferences, dtype=np.int64).reshape(n_rows, len(data.features))
    conversation = np.array(data.conversation, dtype=object)
    names = sorted({s for s in data.system if s != HUMAN})
    if not names:
        raise NothingToAnalyse("no judgment of a chatbot speaker to analyse")
    index = {name: i for i, name in enumerate(names)}

    # One entry per bot-bot judgment, seen from speaker 0.
    _report_progress(progress, "Pairwise win rates")
    bot_bot = (speaker == 0) & (system != HUMAN) & (opponent != HUMAN)
    a = np.array([index[s] for s in system[bot_bot]], dtype=np.int64)
    b = np.array([index[s] for s in opponent[bot_bot]], dtype=np.int64)
    outcome = pw.spot_the_bot_outcomes(codes[bot_bot], opponent_codes[bot_bot])
    matches = _Matches(names, a, b, outcome, conversation[bot_bot])
    if a.size == 0:
        raise NothingToAnalyse("no judgment of a conversation between two chatbots")
    _report_progress(progress, "TrueSkill bootstrap and Bradley-Terry")
    systems, pairs, ranking, bradley_terry = _ranking_section(matches, params, warnings)

    _report_progress(progress, "Survival analysis")
    survival = _survival_section(
        system, exchanges, codes, preferences, data.features, names, params, warnings
    )

    # Per-feature win rates (Table 2): preferences of speaker 0 as pairwise codes.
    features = {"names": list(data.features), "win_rates": {name: {} for name in systems}}
    for f, feature in enumerate(data.features):
        first = preferences[bot_bot, f]
        preferred = np.where(first > 0, pw.A_WINS, np.where(first < 0, pw.B_WINS, pw.TIE))
        rates = pw.feature_win_rates(a, b, preferred, len(names))
        for name in systems:
            i = index[name]
            features["win_rates"][name][feature] = {
                "win_rate": rates.win_rate[i],
                "wins": int(rates.wins[i]),
                "losses": int(rates.losses[i]),
                "no_difference": int(rates.no_difference[i]),
            }

    _report_progress(progress, "Agreement")
    agreement = _spot_the_bot_agreement(data, params, warnings)
    _report_progress(progress, "Ranking stability")
    stability = _stability_section(matches, params, warnings)
    return {
        "tournament": data.subject,
        "kind": data.kind,
        "systems": systems,
        "judgments": len(set(data.judgment)),
        "pairwise": pairs,
        "ranking": ranking,
        "bradley_terry": bradley_terry,
        "survival": survival,
        "features": features,
        "agreement": agreement,
        "stability": stability,
        "warnings": warnings,
    }


def _survival_section(system, exchanges, codes, preferences, features, names, params, warnings):
    lengths = sorted({int(k) for k in exchanges})
    data = spot_the_bot_intervals(system.astype(str), exchanges, codes)
    curves = turnbull_by_group(data, times=lengths)
    spotted = {}
    for name in [*names, HUMAN]:
        mask = system == name
        spotted[name] = [
            [
                int(((codes == pw.BOT) & mask & (exchanges == k)).sum()),
                int((mask & (exchanges == k)).sum()),
            ]
            for k in lengths
        ]
    section = {
        "segment_lengths": lengths,
        "curves": {name: curves[name].survival for name in names if name in curves},
        "human": curves[HUMAN].survival if HUMAN in curves else None,
        "spotted": {name: spotted[name] for name in names},
        "logrank": [],
        "logrank_all": None,
        "cox": {},
    }
    bot_rows = [list(data.groups).index(name) for name in names]
    if len(bot_rows) >= 2:
        counts = data.counts[bot_rows]
        tests = pairwise_interval_logrank(
            data.left, data.right, counts, groups=names, correction=params["correction"]
        )
        section["logrank"] = [
            {
                "a": a,
                "b": b,
                "statistic": tests.statistic[k],
                "p_value": tests.pvalue[k],
                "p_adjusted": tests.pvalue_adjusted[k],
            }
            for k, (a, b) in enumerate(tests.pairs)
        ]
        overall = interval_logrank_test(data.left, data.right, counts)
        section["logrank_all"] = {
            "statistic": overall.statistic,
            "df": overall.df,
            "p_value": overall.pvalue,
        }
    spotted_mask = codes == pw.BOT
    for name in names:
        mask = system == name
        try:
            fit = interval_cox_ph(
                exchanges[mask], spotted_mask[mask], preferences[mask], names=features
            )
        except (ValueError, np.linalg.LinAlgError) as error:
            warnings.append(f"No Cox model for {name}: {error}.")
            continue
        section["cox"][name] = {
            feature: {"coef": fit.coef[f], "se": fit.se[f], "p_value": fit.p_value[f]}
            for f, feature in enumerate(fit.names)
        }
    return section


def _spot_the_bot_agreement(data: SpotTheBotData, params: dict, warnings: list[str]) -> dict:
    seen = set()
    entities = []
    units: dict[tuple, list[int]] = defaultdict(list)
    for i in range(len(data.judgment)):
        unit = f"{data.conversation[i]}@{data.exchanges[i]}"
        key = (unit, data.speaker[i], data.worker[i])
        if key in seen:
            # One worker who judged a segment twice is one judge, not two.
            continue
        seen.add(key)
        entities.append(
            EntityJudgment(
                unit=unit,
                speaker=data.speaker[i],
                system=data.system[i],
                annotator=data.worker[i],
                label=data.label[i],
            )
        )
        units[unit, data.speaker[i]].append(_LABEL_CODE[data.label[i]])
    cooccurrence = label_cooccurrence_agreement(entities)
    return {
        "units_judged_twice": sum(1 for values in units.values() if len(values) >= 2),
        "cooccurrence": [
            {
                "system": row.system,
                "label": row.label,
                "pairs_with_label": row.n_pairs_with_label,
                "pairs_both": row.n_pairs_both,
                "share": row.share,
            }
            for row in cooccurrence
        ],
        "krippendorff": _alpha_section(units, params, warnings),
    }


# --- A/B ----------------------------------------------------------------------------------------


def _ab(data: ABData, params: dict, progress: Progress | None) -> dict:
    warnings: list[str] = []
    weight = np.where(np.array(data.automatic, dtype=bool), data.automatic_weight, 1)
    if len(data.choice) == 0:
        raise NothingToAnalyse("no A/B judgment to analyse")
    names = sorted(set(data.system_a) | set(data.system_b))
    index = {name: i for i, name in enumerate(names)}
    a = np.repeat([index[s] for s in data.system_a], weight).astype(np.int64)
    b = np.repeat([index[s] for s in data.system_b], weight).astype(np.int64)
    outcome = np.repeat([_AB_OUTCOME[c] for c in data.choice], weight).astype(np.int64)
    items = np.repeat(np.array(data.item), weight)
    _report_progress(progress, "Pairwise win rates, TrueSkill bootstrap and Bradley-Terry")
    matches = _Matches(names, a, b, outcome, items)
    systems, pairs, ranking, bradley_terry = _ranking_section(matches, params, warnings)
    _report_progress(progress, "Agreement")
    units: dict[int, list[int]] = defaultdict(list)
    for item, choice, automatic in zip(data.item, data.choice, data.automatic, strict=True):
        if not automatic:
            units[item].append(("a", "b", "tie").index(choice))
    alpha = _alpha_section(units, params, warnings)
    return {
        "tournament": data.subject,
        "kind": data.kind,
        "systems": systems,
        "judgments": int(sum(1 for automatic in data.automatic if not automatic)),
        "automatic_ties": int(sum(data.automatic)),
        "pairwise": pairs,
        "ranking": ranking,
        "bradley_terry": bradley_terry,
        "survival": {
            "segment_lengths": [],
            "curves": {},
            "human": None,
            "spotted": {},
            "logrank": [],
            "logrank_all": None,
            "cox": {},
        },
        "features": {"names": [], "win_rates": {}},
        "agreement": {
            "units_judged_twice": sum(1 for values in units.values() if len(values) >= 2),
            "cooccurrence": [],
            "krippendorff": None if alpha is None else {"nominal": alpha["nominal"]},
        },
        "stability": {},
        "warnings": warnings,
    }


def build_report(
    data: SpotTheBotData | ABData,
    parameters: Mapping | None = None,
    progress: Progress | None = None,
) -> dict:
    """The result contract (module docstring) for these inputs, JSON-safe.

    ``progress`` is called with a short description before each stage. Raises
    NothingToAnalyse when there is nothing to rank, ValueError for bad parameters.
    """
    params = normalize_parameters(parameters)
    if isinstance(data, SpotTheBotData):
        report = _spot_the_bot(data, params, progress)
    elif isinstance(data, ABData):
        report = _ab(data, params, progress)
    else:
        raise TypeError(f"cannot analyse {type(data).__name__}")
    return json_safe(report)
