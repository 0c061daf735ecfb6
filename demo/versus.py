"""The human-versus-automatic demo: a simulated automatic judge on the simulated Spot The
Bot tournament's campaign (``demo.leaderboards``), compared with the crowd at once, so that the
tournament page and ``/results/campaigns/<slug>/human-vs-automatic/`` have something to show
on the first run.

The judge is simulated from the same known model as the crowd (one more careful annotator,
``demo.simulation.spot_the_bot_payload``), written through the judging models as a
finished run; its endpoint (its own: no system is listed for it) is a placeholder on
127.0.0.1 that is never called.
"""

from __future__ import annotations

import random

from django.db import transaction

from analysis.models import AnalysisRun
from analysis.runs.tasks import analyze_judge_run
from annotation.models import Item
from demo.leaderboards import DEMO_HAZARDS, SPOT_THE_BOT_DEMO_SLUG
from demo.simulation import SpotTheBotModel, spot_the_bot_payload
from judging import judges
from judging.defaults import DEFAULT_NAME, install_default_rubrics
from judging.models import AutomaticJudgment, Judge, JudgeRun, Rubric
from tournaments.models import Tournament

__all__ = ["VERSUS_DEMO_JUDGE", "load_versus_demo"]

VERSUS_DEMO_JUDGE = "simulated-judge"
# Never called: the demo's judgments are simulated, not asked for.
_PLACEHOLDER_URL = "http://127.0.0.1:9/v1"


def _judge(owner) -> Judge:
    judge = Judge.objects.filter(slug=VERSUS_DEMO_JUDGE).first()
    if judge is not None:
        return judge
    # A judge is a model, not a chatbot: its endpoint is its own, and no system is listed.
    return judges.register(
        owner=owner,
        slug=VERSUS_DEMO_JUDGE,
        name="Simulated judge",
        endpoint={"url": _PLACEHOLDER_URL, "model_name": "simulated"},
    )


@transaction.atomic
def _judge_run(campaign, owner, model: SpotTheBotModel, seed: int) -> JudgeRun:
    install_default_rubrics()
    rubric = Rubric.objects.filter(task_kind="spot_the_bot", name=DEFAULT_NAME).latest("version")
    run = JudgeRun.objects.create(
        judge=_judge(owner), rubric=rubric, campaign=campaign, status=JudgeRun.Status.DONE
    )
    rng = random.Random(seed)
    items = Item.objects.filter(campaign=campaign, role=Item.Role.TASK).order_by("pk")
    judgments = [
        AutomaticJudgment(
            run=run,
            item=item,
            status=AutomaticJudgment.Status.OK,
            payload=spot_the_bot_payload(
                model,
                item.content["meta"]["speakers"],
                item.content["meta"]["exchanges"],
                False,
                rng,
            ),
        )
        for item in items.only("pk", "content")
    ]
    AutomaticJudgment.objects.bulk_create(judgments)
    JudgeRun.objects.filter(pk=run.pk).update(items_total=len(judgments), items_done=len(judgments))
    return run


def load_versus_demo(
    owner,
    *,
    model: SpotTheBotModel | None = None,
    parameters: dict | None = None,
    seed: int = 2022,
) -> AnalysisRun | None:
    """The simulated judge's run on the Spot The Bot demo tournament (made once) and its
    comparison with the crowd (computed now; reused when nothing changed). ``owner`` owns
    the judge. None when the demo tournament is missing."""
    tournament = Tournament.objects.filter(slug=SPOT_THE_BOT_DEMO_SLUG).first()
    if tournament is None or tournament.campaign_id is None:
        return None
    campaign = tournament.campaign
    run = JudgeRun.objects.filter(judge__slug=VERSUS_DEMO_JUDGE, campaign=campaign).first()
    if run is None:
        run = _judge_run(campaign, owner, model or SpotTheBotModel(DEMO_HAZARDS), seed)
    return analyze_judge_run(run, parameters, synchronous=True)
