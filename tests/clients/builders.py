"""Study objects for the client's tests: campaigns made through the client or by the
annotation builders, and a judge run that fails."""

from tests import factories
from tests.annotation.builders import ab_campaign
from tests.annotation.test_progress import NOW, judge, shown
from tests.arenas.builders import NOWHERE


def ab_campaign_through_the_api(hub, owner):
    """The draft A/B campaign "mine-ab" of `owner`, made by `hub`: four items, one
    judgment wanted of each."""
    system = factories.system(owner, visibility="public")
    baseline = factories.system(None, is_baseline=True, visibility="public")
    prompts = factories.prompt_set(4)
    factories.submission(system, prompts)
    factories.submission(baseline, prompts)
    return hub.campaigns.create(
        task_kind="ab",
        title="Mine against the baseline",
        slug="mine-ab",
        prompt_set=prompts.slug,
        system=system.slug,
        baselines=[baseline.slug],
        redundancy=1,
        batch_size=2,
    )


def judged_campaign(owner):
    """An A/B campaign of `owner` whose two items a worker judged."""
    made = ab_campaign(2, batch_size=2, redundancy=1, owner=owner)
    for item in shown(made):
        judge(item, "ann", at=NOW)
    return made


def judge_run(hub, owner):
    """A judge run over the campaign "mine-ab", whose judge's endpoint nobody answers: it
    runs (Celery is eager) and fails."""
    ab_campaign_through_the_api(hub, owner)
    instructions = "$context\n1: $response_1\n2: $response_2\n$answer_format"
    rubric = hub.rubrics.create("ab", "terse", instructions)
    made = hub.judges.create("my-judge", "My judge", {"url": NOWHERE, "model_name": "judge-7b"})
    return hub.judge_runs.create(made.slug, rubric.id, campaign="mine-ab")
