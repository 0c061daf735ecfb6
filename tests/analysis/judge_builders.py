"""A finished automatic judge run over a campaign, built through the judging models (no
endpoint is ever called: the judgments are written as the judge run would write them)."""

from annotation.models import Item
from endpoints.models import BotEndpoint
from judging.models import AutomaticJudgment, Judge, JudgeRun, Rubric
from tests import factories


def judge(owner, slug="llm-judge"):
    endpoint = BotEndpoint.objects.create(
        owner=owner,
        name="LLM judge",
        protocol="openai",
        url="http://127.0.0.1:9/v1",
        model_name="judge",
    )
    return Judge.objects.create(slug=slug, name="LLM judge", owner=owner, endpoint=endpoint)


def judge_run(campaign, payload_of, *, owner=None, failed=()):
    """A done run of a new judge on ``campaign`` whose payload for each task item is
    ``payload_of(item)`` (None: not judged); items in ``failed`` are failed judgments."""
    owner = owner or campaign.owner or factories.user()
    rubric, _ = Rubric.objects.get_or_create(
        task_kind=campaign.task_kind, name="default", version=1, defaults={"instructions": "Rate."}
    )
    run = JudgeRun.objects.create(
        judge=judge(owner, slug=f"judge-{JudgeRun.objects.count() + 1}"),
        rubric=rubric,
        campaign=campaign,
        status=JudgeRun.Status.DONE,
    )
    done = 0
    for item in Item.objects.filter(campaign=campaign, role=Item.Role.TASK).order_by("pk"):
        if item.pk in failed:
            AutomaticJudgment.objects.create(
                run=run, item=item, status="failed", raw_text="no idea", error="unparsable"
            )
            continue
        payload = payload_of(item)
        if payload is None:
            continue
        AutomaticJudgment.objects.create(run=run, item=item, status="ok", payload=payload)
        done += 1
    JudgeRun.objects.filter(pk=run.pk).update(items_total=done + len(failed), items_done=done)
    run.refresh_from_db()
    return run


TARGETS = {"t-strong": 0.05, "t-middle": 0.45, "t-weak": 1.5}
PARTNERS = {"partner-one": 0.3, "partner-two": 0.7}


def bipartite_tournament(owner=None, slug="bp-cup"):
    """A judged Spot The Bot tournament of three targets whose partner set is two fixed
    partners (the simulation pairs every system; only the ranking's rule matters here)."""
    from demo.simulation import SpotTheBotModel
    from evalhub.models import System
    from tests.analysis.builders import spot_the_bot_tournament
    from tournaments.models import PartnerSet, Tournament

    model = SpotTheBotModel(
        hazards={**TARGETS, **PARTNERS},
        conversations_per_pair=3,
        human_conversations=2,
        workers=8,
        careless_workers=0,
    )
    tournament = spot_the_bot_tournament(model=model, slug=slug, owner=owner)
    partners = PartnerSet.objects.create(slug=f"{slug}-partners", name="Fixed partners")
    partners.systems.set(System.objects.filter(slug__in=list(PARTNERS)))
    Tournament.objects.filter(pk=tournament.pk).update(
        schedule=Tournament.Schedule.BIPARTITE_PLAY, partner_set=partners
    )
    tournament.refresh_from_db()
    return tournament


def spotting_judge(item):
    """A judge that spots each bot speaker in proportion to how weak the system is, and
    prefers the speaker whose system is stronger (deterministic per item)."""
    hazards = {**TARGETS, **PARTNERS}
    speakers = item.content["meta"]["speakers"]
    exchanges = item.content["meta"]["exchanges"]
    labels = []
    for n, system in enumerate(speakers):
        if system == "human":
            labels.append("human")
            continue
        # Spotted when the system's hazard times the exchanges shown passes a threshold
        # that varies with the item, so that strong systems survive more often.
        threshold = ((item.pk * 7 + n * 3) % 10) / 10 + 0.05
        labels.append("bot" if hazards[system] * exchanges > threshold else "human")
    strength = [-hazards.get(s, 0.0) for s in speakers]
    better = 0 if strength[0] > strength[1] else 1 if strength[1] > strength[0] else None
    features = {"sensibleness": better, "specificity": better, "fluency": None}
    return {"labels": labels, "better": features}
