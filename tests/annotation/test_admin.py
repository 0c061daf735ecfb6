"""Admin pages of the annotation app: every model has one, records refuse edits, list pages
cost the same few queries whatever the campaign's size, blocking keeps its history."""

import pytest
from django.apps import apps
from django.contrib import admin
from django.contrib.admin.models import LogEntry
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.allocation import next_assignment
from annotation.models import (
    Assignment,
    Batch,
    Campaign,
    CrowdAction,
    Invitation,
    Item,
    Judgment,
    LaunchRequest,
    Qualification,
    Study,
    TrainingAnswer,
    Worker,
)
from annotation.quality import set_blocked
from annotation.services import record_judgment, submit_if_complete
from tests import factories
from tests.annotation.builders import ab_campaign, batch_items

pytestmark = pytest.mark.django_db

MODELS = [
    Campaign,
    Batch,
    Item,
    Worker,
    Qualification,
    Assignment,
    Judgment,
    TrainingAnswer,
    CrowdAction,
    LaunchRequest,
    Study,
    Invitation,
]
RECORDS = [
    Batch,
    Assignment,
    Judgment,
    Qualification,
    TrainingAnswer,
    CrowdAction,
    LaunchRequest,
    Study,
    Invitation,
]


def url(model, action="changelist", *args):
    from django.urls import reverse

    return reverse(f"admin:annotation_{model._meta.model_name}_{action}", args=args)


def judged_campaign(n_items=4, workers=2, prefix="w"):
    """A live A/B campaign whose batches were judged, with a training answer and a
    qualification for its first worker."""
    campaign = ab_campaign(n_items, gold=1, redundancy=2, batch_size=2)
    judged = []
    for n in range(workers):
        worker = Worker.objects.create(provider="local", external_id=f"link:{prefix}{n}")
        assignment = next_assignment(campaign, worker)
        items = batch_items(assignment)
        for item in items:
            record_judgment(
                assignment, item, {"choice": "a", "left": "a"}, started_at=timezone.now()
            )
        submit_if_complete(assignment, len(items))
        CrowdAction.objects.create(
            campaign=campaign,
            provider="mturk",
            action="approve",
            worker=worker,
            assignment=assignment,
            idempotency_key=f"approve:{prefix}{n}",
            state=CrowdAction.State.DONE,
        )
        judged.append(worker)
    LaunchRequest.objects.create(
        campaign=campaign,
        provider="prolific",
        platform_sandbox=False,
        reward_per_batch=1,
        places=campaign.batches.count() * campaign.redundancy,
    )
    study = Study.objects.create(slug=f"{prefix}-study", name=f"Study {prefix}", source="abc-eval")
    Campaign.objects.filter(pk=campaign.pk).update(study=study)
    first = judged[0]
    Qualification.objects.create(worker=first, key=f"ab:{prefix}", attempts=1, passed=True)
    TrainingAnswer.objects.create(
        worker=first, item=Item.objects.filter(campaign=campaign).first(), payload={}, mistakes=0
    )
    Invitation.objects.create(campaign=campaign, worker=first, used_at=timezone.now())
    return campaign, judged


@pytest.fixture
def superuser(client):
    user = factories.user("boss", staff=True)
    client.force_login(user)
    return user


def test_every_annotation_model_has_an_admin():
    models = set(apps.get_app_config("annotation").get_models())
    assert models == set(MODELS)
    assert all(model in admin.site._registry for model in models)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_change_list_and_change_page_answer(client, superuser, model):
    judged_campaign()
    changelist = client.get(url(model))
    change = client.get(url(model, "change", model.objects.first().pk))
    assert (changelist.status_code, change.status_code) == (200, 200)
    assert changelist.context["cl"].result_count == model.objects.count()


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_change_list_search_and_filters_answer(client, superuser, model):
    judged_campaign()
    model_admin = admin.site._registry[model]
    assert model_admin.search_fields and model_admin.list_filter
    assert client.get(url(model) + "?q=w0").status_code == 200


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_change_lists_cost_the_same_queries_on_a_bigger_campaign(
    client, superuser, model, django_assert_max_num_queries
):
    judged_campaign(4, workers=1, prefix="a")
    with CaptureQueriesContext(connection) as small:
        rows = client.get(url(model)).context["cl"].result_count
    judged_campaign(20, workers=6, prefix="b")
    with django_assert_max_num_queries(len(small.captured_queries)):
        bigger = client.get(url(model)).context["cl"].result_count
    assert bigger > rows


@pytest.mark.parametrize("model", RECORDS, ids=lambda m: m.__name__)
def test_records_refuse_add_change_and_delete(client, superuser, model):
    judged_campaign()
    Campaign.objects.update(status=Campaign.Status.LIVE)
    obj = model.objects.first()
    count = model.objects.count()
    assert client.get(url(model, "add")).status_code == 403
    page = client.get(url(model, "change", obj.pk)).content.decode()
    assert 'type="submit"' not in page.split('id="content-main"')[1]
    assert client.post(url(model, "change", obj.pk), {}).status_code == 403
    assert client.post(url(model, "delete", obj.pk), {"post": "yes"}).status_code == 403
    assert model.objects.count() == count


def test_a_judgment_is_shown_with_its_payload_and_cannot_be_edited(client, superuser):
    judged_campaign()
    judgment = Judgment.objects.first()
    page = client.get(url(Judgment, "change", judgment.pk)).content.decode()
    assert "&quot;choice&quot;: &quot;a&quot;" in page
    client.post(url(Judgment, "change", judgment.pk), {"payload": '{"choice": "b"}'})
    judgment.refresh_from_db()
    assert judgment.payload["choice"] == "a"


def test_items_of_a_launched_campaign_cannot_be_changed(client, superuser):
    campaign, _ = judged_campaign()
    item = Item.objects.filter(campaign=campaign).first()
    response = client.post(url(Item, "change", item.pk), {"content": "{}", "gold": ""})
    item.refresh_from_db()
    assert response.status_code == 403
    assert item.content != {}


def test_items_of_a_draft_can_be_corrected(client, superuser):
    campaign = ab_campaign(2, status=Campaign.Status.DRAFT)
    item = Item.objects.filter(campaign=campaign).first()
    response = client.post(
        url(Item, "change", item.pk), {"content": '{"context": ["fixed"]}', "gold": "null"}
    )
    item.refresh_from_db()
    assert response.status_code == 302
    assert item.content == {"context": ["fixed"]}


def test_a_campaigns_kind_and_size_are_never_edited_and_its_status_not_here(client, superuser):
    campaign = ab_campaign(2, status=Campaign.Status.DRAFT)
    page = client.get(url(Campaign, "change", campaign.pk)).content.decode()
    assert 'name="title"' in page
    for baked in ("task_kind", "task_config", "redundancy", "batch_size", "status"):
        assert f'name="{baked}"' not in page


def test_a_drafts_title_and_reward_are_edited_here(client, superuser):
    campaign = ab_campaign(2, status=Campaign.Status.DRAFT)
    response = client.post(
        url(Campaign, "change", campaign.pk),
        {
            "title": "Renamed",
            "instructions": "Pick the better answer.",
            "max_batches_per_worker": 2,
            "time_limit_minutes": 30,
            "provider": "local",
            "provider_config": "{}",
            "reward_per_batch": "1.50",
            "redundancy": 9,
            "language": "en",
        },
    )
    campaign.refresh_from_db()
    assert response.status_code == 302
    assert (campaign.title, str(campaign.reward_per_batch)) == ("Renamed", "1.50")
    assert campaign.redundancy == 3  # baked into the open slots: not taken from the form


def test_a_launched_campaign_keeps_what_workers_were_offered(client, superuser):
    campaign, _ = judged_campaign()
    page = client.get(url(Campaign, "change", campaign.pk)).content.decode()
    assert 'name="instructions"' in page
    assert 'name="reward_per_batch"' not in page and 'name="provider"' not in page


def test_a_launched_campaign_cannot_be_deleted_nor_added_here(client, superuser):
    campaign, _ = judged_campaign()
    assert client.post(url(Campaign, "delete", campaign.pk), {"post": "yes"}).status_code == 403
    assert client.get(url(Campaign, "add")).status_code == 403
    assert Judgment.objects.filter(campaign=campaign).exists()


def test_a_draft_campaign_is_deleted_with_its_items_batches_and_slots(client, superuser):
    campaign = ab_campaign(4, status=Campaign.Status.DRAFT, batch_size=2)
    response = client.post(url(Campaign, "delete", campaign.pk), {"post": "yes"})
    assert response.status_code == 302
    assert not Campaign.objects.filter(pk=campaign.pk).exists()
    assert not Item.objects.exists() and not Batch.objects.exists()
    assert not Assignment.objects.exists()


def test_workers_are_neither_added_nor_deleted_here(client, superuser):
    _, (worker, _) = judged_campaign()
    assert client.get(url(Worker, "add")).status_code == 403
    assert client.post(url(Worker, "delete", worker.pk), {"post": "yes"}).status_code == 403
    assert Worker.objects.filter(pk=worker.pk).exists()


def test_the_block_history_is_on_the_workers_page(client, superuser):
    _, (worker, _) = judged_campaign()
    set_blocked(worker, blocked=True, reason="clicked through in 2 s", by=superuser)
    set_blocked(worker, blocked=False, reason="", by=superuser)
    page = client.get(url(Worker, "change", worker.pk)).content.decode()
    assert "Block history" in page
    assert "Blocked: clicked through in 2 s" in page and "Unblocked" in page
    assert page.index("Unblocked") < page.index("Blocked: clicked")  # newest first


def test_a_worker_never_blocked_says_so(client, superuser):
    _, (worker, _) = judged_campaign()
    assert "Never blocked." in client.get(url(Worker, "change", worker.pk)).content.decode()


def test_blocking_from_the_admin_is_recorded_with_its_reason(client, superuser):
    _, (worker, _) = judged_campaign()
    response = client.post(
        url(Worker, "change", worker.pk), {"blocked": "on", "blocked_reason": "random answers"}
    )
    worker.refresh_from_db()
    assert response.status_code == 302
    assert (worker.blocked, worker.blocked_reason) == (True, "random answers")
    entries = LogEntry.objects.filter(object_id=str(worker.pk))
    assert [e.change_message for e in entries] == ["Blocked: random answers"]
    assert entries[0].user == superuser


def test_unblocking_from_the_admin_does_not_repeat_the_old_reason(client, superuser):
    _, (worker, _) = judged_campaign()
    set_blocked(worker, blocked=True, reason="random answers")
    response = client.post(url(Worker, "change", worker.pk), {"blocked_reason": "random answers"})
    worker.refresh_from_db()
    assert response.status_code == 302
    assert (worker.blocked, worker.blocked_reason) == (False, "")
    assert LogEntry.objects.get(object_id=str(worker.pk)).change_message == "Unblocked"


def test_blocking_from_the_admin_needs_a_reason(client, superuser):
    _, (worker, _) = judged_campaign()
    response = client.post(url(Worker, "change", worker.pk), {"blocked": "on"})
    worker.refresh_from_db()
    assert response.status_code == 200
    assert "Say why this worker is blocked" in response.content.decode()
    assert not worker.blocked and not LogEntry.objects.exists()


def test_a_workers_identity_is_not_editable(client, superuser):
    _, (worker, _) = judged_campaign()
    client.post(
        url(Worker, "change", worker.pk),
        {"external_id": "link:someone-else", "provider": "mturk", "blocked_reason": ""},
    )
    worker.refresh_from_db()
    assert (worker.provider, worker.external_id) == ("local", "link:w0")
