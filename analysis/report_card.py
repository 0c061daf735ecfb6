"""A system's report card: every evaluation it took part in, with its strengths and
weaknesses (``analysis.reports.report_card``), and the evidence behind its behaviour rates.

Evaluations are the latest successful run of each tournament, campaign and imported study
whose result lists the system, among those the viewer may see: tournaments by their own
visibility (published, or the viewer's own), campaigns and studies only for those who may
manage them, as their result pages. The evidence is the bot turns of the system that
annotators flagged with a behaviour, from ABC-Eval campaigns the viewer may manage.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q
from django.urls import NoReverseMatch, reverse

from annotation.models import Campaign, Item, Judgment, Study
from evalhub.permissions import is_staff
from tournaments.models import Tournament

from .models import AnalysisRun
from .reports.report_card import strengths_and_weaknesses

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
