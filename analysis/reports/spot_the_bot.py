"""The Spot The Bot report: ranking, survival, feature win rates (Table 2), agreement
(Table 3) and stability, from Deriu et al. (2020), sections 3.2-3.3 and 4.

Self-play (a system talking to itself) has no winner: its judgments never become a pairwise
match, but both of its speakers count towards the system's own figures (scores, survival,
spotted rates), as bipartite-play scores each target on its own dialogues.

Bipartite-play (``data.partners``): the targets are ranked; the partners are the fixed
opponents through which targets are compared (TrueSkill and Bradley-Terry are fitted over
every match, so that targets who never met are placed on one scale through the partners
they share) and are reported apart, in ``partners``, never among the ranked systems.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from analysis.reports.common import (
    LABEL_CODE,
    Matches,
    Progress,
    alpha_section,
    category_codes,
    ranking_section,
    report_progress,
    stability_section,
    stability_subsamples,
)
from analysis.reports.data import HUMAN, NothingToAnalyse, SpotTheBotData, plain_rows
from analysis.runs import background
from evalstats import pairwise as pw
from evalstats.agreement import EntityJudgment, label_cooccurrence_agreement
from evalstats.bradley_terry import ranks_from_intervals
from evalstats.interval_cox import interval_cox_ph
from evalstats.interval_logrank import interval_logrank_test, pairwise_interval_logrank
from evalstats.intervals import spot_the_bot_intervals
from evalstats.proportions import wilson_interval
from evalstats.turnbull import turnbull_by_group


def spot_the_bot_report(
    data: SpotTheBotData, params: dict, progress: Progress | None, *, stability: bool = True
) -> dict:
    """The report; without ``stability`` its ``stability`` is None (to be computed apart by
    ``spot_the_bot_stability``) unless there is nothing to compute (``{}``: no bot-bot
    match)."""
    warnings: list[str] = []
    n_rows = len(data.judgment)
    if n_rows == 0:
        raise NothingToAnalyse("no Spot The Bot judgment to analyse")
    system, opponent = data.system, data.opponent
    exchanges, conversation = data.exchanges, data.conversation
    codes = category_codes(data.label, LABEL_CODE)
    preferences = data.preferences.astype(np.int64)
    everyone, bot_bot, matches = _matches(data, codes)
    partners = sorted(set(data.partners) & set(everyone))
    a = matches.a

    report_progress(progress, "Pairwise win rates")
    # The costly part of the stability analysis needs only the matches: it is computed on
    # another core while the rest of the report is.
    stability_part = (
        background.start(
            stability_subsamples,
            matches,
            params,
            worth_a_process=a.size >= _MATCHES_WORTH_A_PROCESS,
        )
        if a.size and stability
        else None
    )
    scores = _scores_section(system, codes, conversation, opponent, params["coverage"])
    report_progress(progress, "TrueSkill bootstrap and Bradley-Terry")
    if a.size:
        systems, pairs, ranking, bradley_terry = ranking_section(matches, params, warnings)
    else:
        warnings.append(
            "No ranking: no judgment sets two different chatbots against each other "
            "(self-play only); see each system's own scores."
        )
        systems = sorted(everyone, key=lambda name: (-_nan_low(scores[name]["share_human"]), name))
        pairs, ranking, bradley_terry = [], [], []
    partner_section = []
    if partners:
        systems, ranking, bradley_terry = _targets_only(systems, ranking, bradley_terry, partners)
        partner_section = _partners_section(partners, matches, scores, pairs)
        # The pairwise table orders ranked systems; a partner's matches go with the partner,
        # and targets never meet by design.
        pairs = [
            row
            for row in pairs
            if row["a"] not in partners
            and row["b"] not in partners
            and row["wins_a"] + row["wins_b"] + row["ties"] > 0
        ]
    names = [name for name in everyone if name not in partners]

    report_progress(progress, "Survival analysis")
    survival = _survival_section(
        system, exchanges, codes, preferences, data.features, names, params, warnings
    )

    features = _features_section(matches, preferences[bot_bot], data.features, systems)

    report_progress(progress, "Agreement")
    agreement = _spot_the_bot_agreement(data, params, warnings)
    report_progress(progress, "Ranking stability")
    if stability_part:
        stability_result = stability_section(matches, params, warnings, stability_part.result())
    else:
        stability_result = {} if stability or not a.size else None
    return {
        "tournament": data.subject,
        "kind": data.kind,
        "systems": systems,
        "judgments": len(np.unique(data.judgment)),
        "pairwise": pairs,
        "ranking": ranking,
        "bradley_terry": bradley_terry,
        "scores": {name: scores[name] for name in [*systems, HUMAN] if name in scores},
        "partners": partner_section,
        "survival": survival,
        "features": features,
        "agreement": agreement,
        "stability": stability_result,
        "warnings": warnings,
    }


def spot_the_bot_stability(data: SpotTheBotData, params: dict) -> tuple[dict, list[str]]:
    """The stability section of the report of ``data`` and the warnings it adds (appended
    after the report's own, where the report computed with it has them): the same as the
    report computes when it computes the section itself."""
    codes = category_codes(data.label, LABEL_CODE)
    _, _, matches = _matches(data, codes)
    if not matches.a.size:
        return {}, []
    warnings: list[str] = []
    section = stability_section(matches, params, warnings, stability_subsamples(matches, params))
    return section, warnings


def _matches(data: SpotTheBotData, codes):
    """The chatbots (sorted), which judgments are bot-bot matches, and those matches: one
    entry per bot-bot judgment, seen from speaker 0; self-play is no match."""
    system, opponent, speaker = data.system, data.opponent, data.speaker
    # np.unique sorts by code point, as sorted() sorts str.
    everyone = [s for s in np.unique(system).tolist() if s != HUMAN]
    if not everyone:
        raise NothingToAnalyse("no judgment of a chatbot speaker to analyse")
    bot_bot = (speaker == 0) & (system != HUMAN) & (opponent != HUMAN) & (system != opponent)
    a = np.searchsorted(everyone, system[bot_bot]).astype(np.int64)
    b = np.searchsorted(everyone, opponent[bot_bot]).astype(np.int64)
    opponent_codes = category_codes(data.opponent_label, LABEL_CODE)
    outcome = pw.spot_the_bot_outcomes(codes[bot_bot], opponent_codes[bot_bot])
    return everyone, bot_bot, Matches(everyone, a, b, outcome, data.conversation[bot_bot])


# Bot-bot matches from which a forked stability analysis pays for its fork (tens of ms).
_MATCHES_WORTH_A_PROCESS = 500


def _nan_low(value) -> float:
    return -np.inf if value is None or np.isnan(value) else value


def _scores_section(system, codes, conversation, opponent, coverage: float) -> dict:
    """Per system (and "human"), every judgment of its speakers, self-play included: how
    often each label was given and the share judged human with its Wilson interval."""
    section = {}
    for name in sorted(set(system.tolist())):
        mask = system == name
        judged = int(mask.sum())
        human = int(((codes == pw.HUMAN) & mask).sum())
        interval = wilson_interval(human, judged, coverage)
        section[name] = {
            "judged": judged,
            "human": human,
            "unsure": int(((codes == pw.UNSURE) & mask).sum()),
            "bot": int(((codes == pw.BOT) & mask).sum()),
            "share_human": float(interval.proportion),
            "ci": [
                float(interval.confidence_interval.low),
                float(interval.confidence_interval.high),
            ],
            "conversations": len(set(conversation[mask].tolist())),
            "self_play_judged": int((mask & (opponent == name)).sum()),
        }
    return section


def _targets_only(systems, ranking, bradley_terry, partners):
    """The ranking without the partners: clusters renumbered 1, 2, ... in order, rank
    ranges and the Bradley-Terry rank recomputed among the targets (BT: 1 + targets
    significantly better)."""
    targets = [name for name in systems if name not in partners]
    kept = [dict(row) for row in ranking if row["system"] not in partners]
    renumber: dict[int, int] = {}
    ranges = [row["rank_range"] for row in kept]
    for row, (low, high) in zip(kept, ranges, strict=True):
        row["cluster"] = renumber.setdefault(row["cluster"], len(renumber) + 1)
        # The bootstrap ranked targets and partners together: count only the targets
        # surely above (their worst rank beats this one's best) or possibly above.
        row["rank_range"] = [
            1 + sum(1 for lo, hi in ranges if hi < low),
            sum(1 for lo, hi in ranges if lo <= high),
        ]
    bt = [dict(row) for row in bradley_terry if row["system"] not in partners]
    if bt:
        ranks = ranks_from_intervals(
            [np.nan_to_num(row["ci"][0], nan=-np.inf) for row in bt],
            [np.nan_to_num(row["ci"][1], nan=np.inf) for row in bt],
        )
        for row, rank in zip(bt, ranks, strict=True):
            row["rank"] = int(rank)
        bt.sort(key=lambda row: (row["rank"], -row["rating"]))
    return targets, kept, bt


def _partners_section(partners, matches: Matches, scores: dict, pairs: list[dict]) -> list[dict]:
    """Each partner's record against the targets (not a rank), per target with the pair's
    test, and its own scores."""
    rows = []
    for name in partners:
        p = matches.names.index(name)
        as_a, as_b = matches.a == p, matches.b == p
        wins = int(((matches.outcome == pw.A_WINS) & as_a).sum()) + int(
            ((matches.outcome == pw.B_WINS) & as_b).sum()
        )
        losses = int(((matches.outcome == pw.B_WINS) & as_a).sum()) + int(
            ((matches.outcome == pw.A_WINS) & as_b).sum()
        )
        ties = int(((matches.outcome == pw.TIE) & (as_a | as_b)).sum())
        rows.append(
            {
                "system": name,
                "wins": wins,
                "losses": losses,
                "ties": ties,
                "win_rate": wins / (wins + losses) if wins + losses else None,
                **{key: scores[name][key] for key in ("judged", "share_human", "ci")},
                "against": [
                    _as_partner(row, name) for row in pairs if name in (row["a"], row["b"])
                ],
            }
        )
    return rows


def _as_partner(row: dict, partner: str) -> dict:
    """A pairwise row seen from the partner's side: the target, and the target's wins."""
    target_is_a = row["b"] == partner
    return {
        "target": row["a"] if target_is_a else row["b"],
        "target_wins": row["wins_a"] if target_is_a else row["wins_b"],
        "partner_wins": row["wins_b"] if target_is_a else row["wins_a"],
        "ties": row["ties"],
        "p_value": row["p_value"],
        "p_adjusted": row["p_adjusted"],
    }


def _features_section(matches: Matches, preferences, features, systems) -> dict:
    """Per-feature win rates (Table 2): preferences of speaker 0 as pairwise codes."""
    index = {name: i for i, name in enumerate(matches.names)}
    section = {"names": list(features), "win_rates": {name: {} for name in systems}}
    for f, feature in enumerate(features):
        first = preferences[:, f]
        preferred = np.where(first > 0, pw.A_WINS, np.where(first < 0, pw.B_WINS, pw.TIE))
        rates = pw.feature_win_rates(matches.a, matches.b, preferred, len(matches.names))
        for name in systems:
            i = index[name]
            section["win_rates"][name][feature] = {
                "win_rate": rates.win_rate[i],
                "wins": int(rates.wins[i]),
                "losses": int(rates.losses[i]),
                "no_difference": int(rates.no_difference[i]),
            }
    return section


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
        "logrank_variance": params["logrank_variance"],
        "cox": {},
    }
    bot_rows = [list(data.groups).index(name) for name in names]
    if len(bot_rows) >= 2:
        counts = data.counts[bot_rows]
        variance = {
            "variance": params["logrank_variance"],
            "imputations": params["logrank_imputations"],
            "seed": params["seed"],
        }
        tests = pairwise_interval_logrank(
            data.left, data.right, counts, groups=names, correction=params["correction"], **variance
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
        overall = interval_logrank_test(data.left, data.right, counts, **variance)
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
    # Plain Python values, as the agreement statistics and the result expect.
    rows = plain_rows(data, "conversation", "exchanges", "speaker", "worker", "system", "label")
    for conversation, exchanges, speaker, worker, system, label in rows:
        unit = f"{conversation}@{exchanges}"
        key = (unit, speaker, worker)
        if key in seen:
            # One worker who judged a segment twice is one judge, not two.
            continue
        seen.add(key)
        entities.append(
            EntityJudgment(unit=unit, speaker=speaker, system=system, annotator=worker, label=label)
        )
        units[unit, speaker].append(LABEL_CODE[label])
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
        "krippendorff": alpha_section(units, params, warnings),
    }
