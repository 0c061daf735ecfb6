"""A system's report card: every evaluation it took part in, with its strengths and
weaknesses, and the evidence behind its behaviour rates.

Evaluations are the latest successful run of each tournament, campaign and imported study
whose result lists the system, among those the viewer may see: tournaments by their own
visibility (published, or the viewer's own), campaigns and studies only for those who may
manage them, as their result pages. The evidence is the bot turns of the system that
annotators flagged with a behaviour, from ABC-Eval campaigns the viewer may manage.

Strengths and weaknesses are read from the result JSON of the runs by pure functions
(result dictionaries in, rows out). Each row is one behaviour, dimension or feature::

    {"section": "behaviour" | "likert" | "comparative" | "feature",
     "name", "level" | None, "value", "low", "high", "others", "n",
     "verdict": "strength" | "weakness" | "even", "detail"}

How a verdict is reached, per section:

* ``behaviour`` (ABC-Eval rates, ``behaviours.rates``): the system's share of bot turns with
  the behaviour against the mean of the other systems' shares; a strength when its 95%
  Wilson interval lies wholly on the good side of that mean (below it for an undesirable
  behaviour, above it for a desirable one), a weakness when wholly on the bad side;
* ``likert`` (``likert.means``): the same with the t interval of its mean rating against
  the other systems' mean of means, higher being better;
* ``comparative`` (``comparative.results``): over every pair it is in, its wins and losses
  per dimension; a strength when it wins at least one pair significantly (adjusted
  p < 0.05) and loses none significantly, a weakness in the mirror case;
* ``feature`` (Spot The Bot's per-feature win rates, ``features.win_rates``): the exact
  sign test of its wins against its losses (ties dropped); p < 0.05 decides.

"even" means no clear difference; rows are sorted strengths first, then weaknesses.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Q
from django.urls import NoReverseMatch, reverse

from analysis.models import AnalysisRun
from analysis.reports.data import UNDESIRABLE_LABELS
from annotation.models import Campaign, Item, Judgment, Study
from evalhub.permissions import is_staff
from tournaments.models import Tournament

ALPHA = 0.05
ORDER = {"strength": 0, "weakness": 1, "even": 2}
# ABC-Eval's undesirable behaviours (Figure 4) when a rate row does not say its group.
UNDESIRABLE = UNDESIRABLE_LABELS


def _mean(values):
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def _interval_verdict(low, high, others, higher_is_better: bool) -> str:
    if others is None or low is None or high is None:
        return "even"
    if low > others:
        return "strength" if higher_is_better else "weakness"
    if high < others:
        return "weakness" if higher_is_better else "strength"
    return "even"


def behaviour_rows(section: dict | None, system: str) -> list[dict]:
    rows = []
    rates = (section or {}).get("rates") or []
    for label in dict.fromkeys(r["label"] for r in rates):
        mine = [r for r in rates if r["label"] == label and r["system"] == system]
        if not mine:
            continue
        row = mine[0]
        others = _mean(r["rate"] for r in rates if r["label"] == label and r["system"] != system)
        group = row.get("group") or ("undesirable" if label in UNDESIRABLE else "desirable")
        rows.append(
            {
                "section": "behaviour",
                "name": label,
                "level": None,
                "value": row["rate"],
                "low": row.get("low"),
                "high": row.get("high"),
                "others": others,
                "n": row.get("n_turns"),
                "verdict": _interval_verdict(
                    row.get("low"), row.get("high"), others, group == "desirable"
                ),
                "detail": f"{group} behaviour: share of bot turns",
            }
        )
    return rows


def likert_rows(section: dict | None, system: str) -> list[dict]:
    rows = []
    means = (section or {}).get("means") or []
    keys = dict.fromkeys((r["dimension"], r.get("level")) for r in means)
    for dimension, level in keys:
        same = [r for r in means if r["dimension"] == dimension and r.get("level") == level]
        mine = [r for r in same if r["system"] == system]
        if not mine:
            continue
        row = mine[0]
        others = _mean(r["mean"] for r in same if r["system"] != system)
        rows.append(
            {
                "section": "likert",
                "name": dimension,
                "level": level,
                "value": row["mean"],
                "low": row.get("low"),
                "high": row.get("high"),
                "others": others,
                "n": row.get("n"),
                "verdict": _interval_verdict(row.get("low"), row.get("high"), others, True),
                "detail": "mean rating, 1 to 5",
            }
        )
    return rows


def comparative_rows(section: dict | None, system: str) -> list[dict]:
    tallies: dict[str, dict] = defaultdict(
        lambda: {"wins": 0, "losses": 0, "ties": 0, "won": 0, "lost": 0}
    )
    for row in (section or {}).get("results") or []:
        if system not in (row["a"], row["b"]):
            continue
        mine, theirs = ("wins", "losses") if row["a"] == system else ("losses", "wins")
        tally = tallies[row["dimension"]]
        tally["wins"] += row[mine]["count"]
        tally["losses"] += row[theirs]["count"]
        tally["ties"] += row["ties"]["count"]
        p = row.get("p_adjusted", row.get("p_value"))
        if p is not None and p < ALPHA and row[mine]["count"] != row[theirs]["count"]:
            tally["won" if row[mine]["count"] > row[theirs]["count"] else "lost"] += 1
    rows = []
    for dimension, t in tallies.items():
        n = t["wins"] + t["losses"] + t["ties"]
        if t["won"] and not t["lost"]:
            verdict = "strength"
        elif t["lost"] and not t["won"]:
            verdict = "weakness"
        else:
            verdict = "even"
        rows.append(
            {
                "section": "comparative",
                "name": dimension,
                "level": None,
                "value": t["wins"] / n if n else None,
                "low": None,
                "high": None,
                "others": t["losses"] / n if n else None,
                "n": n,
                "verdict": verdict,
                "detail": f"{t['wins']} wins, {t['ties']} ties, {t['losses']} losses; "
                f"significantly better than {t['won']}, worse than {t['lost']} system(s)",
            }
        )
    return rows


def feature_rows(features: dict | None, system: str) -> list[dict]:
    # evalstats.proportions imports scipy.stats: here, not with the report card page's
    # modules, which are loaded at app start-up.
    from evalstats.proportions import sign_test_from_counts

    rows = []
    for feature, counts in ((features or {}).get("win_rates") or {}).get(system, {}).items():
        wins, losses = int(counts.get("wins") or 0), int(counts.get("losses") or 0)
        test = sign_test_from_counts(wins, losses) if wins + losses else None
        verdict = "even"
        if test is not None and test.pvalue < ALPHA and wins != losses:
            verdict = "strength" if wins > losses else "weakness"
        rows.append(
            {
                "section": "feature",
                "name": feature,
                "level": None,
                "value": counts.get("win_rate"),
                "low": None,
                "high": None,
                "others": None,
                "n": wins + losses,
                "verdict": verdict,
                "detail": f"{wins} wins, {losses} losses against the other systems"
                + ("" if test is None else f" (sign test p = {test.pvalue:.4f})"),
            }
        )
    return rows


def strengths_and_weaknesses(result: dict, system: str) -> list[dict]:
    """Every row the result has about ``system``, strengths first, then weaknesses."""
    rows = (
        behaviour_rows(result.get("behaviours"), system)
        + likert_rows(result.get("likert"), system)
        + comparative_rows(result.get("comparative"), system)
        + feature_rows(result.get("features"), system)
    )
    return sorted(rows, key=lambda r: ORDER[r["verdict"]])


# At most this many flagged turns on one evidence page.
EVIDENCE_LIMIT = 200


@dataclass
class Evaluation:
    kind: str  # "tournament", "campaign" or "study"
    title: str
    url: str | None
    run: AnalysisRun
    rows: list[dict]

    @property
    def strengths(self) -> list[dict]:
        return [r for r in self.rows if r["verdict"] == "strength"]

    @property
    def weaknesses(self) -> list[dict]:
        return [r for r in self.rows if r["verdict"] == "weakness"]


def _url(name: str, slug: str) -> str | None:
    try:
        return reverse(name, args=[slug])
    except NoReverseMatch:
        return None


def managed_campaigns(user):
    """Campaigns whose results the user may see: staff all, others their own (or their
    study's)."""
    if is_staff(user):
        return Campaign.objects.all()
    if user is None or not user.is_authenticated:
        return Campaign.objects.none()
    return Campaign.objects.filter(Q(owner=user) | Q(study__owner=user))


def managed_studies(user):
    if is_staff(user):
        return Study.objects.all()
    if user is None or not user.is_authenticated:
        return Study.objects.none()
    return Study.objects.filter(owner=user)


def _latest_runs(runs, key: str) -> list[AnalysisRun]:
    latest: dict = {}
    for run in runs.order_by("-finished_at", "-pk"):
        latest.setdefault(getattr(run, key), run)
    return list(latest.values())


def _lists(run: AnalysisRun, slug: str) -> bool:
    systems = (run.result or {}).get("systems") or []
    return slug in systems


def evaluations(system, user) -> list[Evaluation]:
    slug = system.slug
    found = []
    succeeded = AnalysisRun.objects.succeeded().defer("plots")
    tournaments = Tournament.objects.visible_to(user)
    for run in _latest_runs(
        succeeded.filter(tournament__in=tournaments).select_related("tournament"),
        "tournament_id",
    ):
        if _lists(run, slug):
            t = run.tournament
            found.append(Evaluation("tournament", t.name, _url("analysis:detail", t.slug), run, []))
    campaign_runs = succeeded.filter(
        campaign__in=managed_campaigns(user), tournament__isnull=True
    ).select_related("campaign")
    for run in _latest_runs(campaign_runs, "campaign_id"):
        if _lists(run, slug):
            c = run.campaign
            url = _url("results:campaign", c.slug) or _url("annotation:manage-campaign", c.slug)
            found.append(Evaluation("campaign", c.title, url, run, []))
    study_runs = succeeded.filter(study__in=managed_studies(user)).select_related("study")
    for run in _latest_runs(study_runs, "study_id"):
        if _lists(run, slug):
            s = run.study
            found.append(Evaluation("study", s.name, _url("results:study", s.slug), run, []))
    for evaluation in found:
        evaluation.rows = strengths_and_weaknesses(evaluation.run.result, slug)
        for row in evaluation.rows:
            if row["section"] == "behaviour" and evaluation.kind != "tournament":
                row["evidence_url"] = reverse(
                    "analysis:behaviour-evidence", args=[slug, row["name"]]
                )
    return found


@dataclass(frozen=True)
class FlaggedTurn:
    conversation: str
    position: int
    text: str
    flagged: int  # annotations that flagged the behaviour on this turn
    annotations: int  # annotations of the behaviour on this turn


def flagged_turns(system, label: str, user) -> tuple[list[FlaggedTurn], int]:
    """The system's bot turns flagged with ``label`` (most flags first) and how many there
    are in all; only task items of ABC-Eval campaigns the user may manage."""
    judgments = Judgment.objects.filter(
        campaign__in=managed_campaigns(user).filter(task_kind="abc_eval"),
        item__role=Item.Role.TASK,
        item__content__meta__system=system.slug,
    ).values_list("item__content", "payload")
    tally: dict[tuple[str, int], list] = {}
    for content, payload in judgments.iterator():
        flags = (payload or {}).get("labels", {}).get(label)
        if flags is None:
            continue
        texts = {t["position"]: t["text"] for t in content.get("turns", [])}
        conversation = content.get("meta", {}).get("conversation", "?")
        for position, flag in zip(content.get("bot_turns", []), flags, strict=False):
            entry = tally.setdefault((conversation, position), [texts.get(position, ""), 0, 0])
            entry[1] += bool(flag)
            entry[2] += 1
    turns = [
        FlaggedTurn(conversation, position, text, flagged, annotations)
        for (conversation, position), (text, flagged, annotations) in tally.items()
        if flagged
    ]
    turns.sort(key=lambda t: (-t.flagged, t.conversation, t.position))
    return turns[:EVIDENCE_LIMIT], len(turns)
