"""The chat kind: config, balanced slots one system each, allocation (never the same system
twice), the rating after the chat, the side-by-side comparison, and the export row."""

import random
from collections import Counter

import pytest
from django.test import Client
from django.urls import reverse

from annotation import chat
from annotation.campaigns import ChatSystems, SetupInvalid, create_campaign
from annotation.kinds import get_kind
from annotation.kinds.base import ConfigInvalid
from annotation.kinds.chat import build_items
from annotation.models import Campaign
from tests import factories
from tests.annotation.chat_setup import bot_system, chat_campaign, items, say, start, url
from tests.endpoints import openai_fake
from tests.endpoints.openai_fake import FakePool

pytestmark = pytest.mark.django_db
KIND = get_kind("chat")


@pytest.fixture
def fakes():
    with FakePool() as pool:
        yield pool


def test_defaults_are_filled_in():
    config = KIND.clean_config({})
    assert (config["min_turns"], config["max_turns"], config["compare"]) == (3, 10, True)
    assert config["repeat_systems"] is False and len(config["dimensions"]) == 8


@pytest.mark.parametrize(
    ("config", "words"),
    [
        ({"min_turns": 5, "max_turns": 2}, ["min_turns (5)", "max_turns (2)"]),
        ({"max_turns": 51}, ["max_turns"]),
        ({"min_turns": 0}, ["min_turns"]),
        ({"dimensions": ["charm"]}, ["'charm'"]),
        ({"turns": 3}, ["'turns'"]),
    ],
)
def test_a_bad_config_is_refused_naming_the_key(config, words):
    with pytest.raises(ConfigInvalid) as raised:
        KIND.clean_config(config)
    for word in words:
        assert word in str(raised.value)


def test_slots_are_balanced_across_systems_one_system_each():
    systems = [factories.system(slug=s) for s in ("a-bot", "b-bot", "c-bot")]
    config = KIND.clean_config({"conversations_per_system": 4})
    specs = build_items(systems, config, random.Random(1))
    assert Counter(s.content["meta"]["system"] for s in specs) == {
        "a-bot": 4,
        "b-bot": 4,
        "c-bot": 4,
    }
    first_round = {s.content["meta"]["system"] for s in specs[:3]}
    assert first_round == {"a-bot", "b-bot", "c-bot"}
    assert {s.group_key for s in specs} == {"system:a-bot", "system:b-bot", "system:c-bot"}


def test_repeat_systems_drops_the_system_group():
    systems = [factories.system(slug="a-bot")]
    config = KIND.clean_config({"repeat_systems": True, "conversations_per_system": 2})
    assert {s.group_key for s in build_items(systems, config, random.Random(1))} == {""}


def test_a_chat_campaign_needs_systems():
    campaign = Campaign(slug="no-bots", title="No bots", task_kind="chat")
    with pytest.raises(SetupInvalid) as raised:
        create_campaign(campaign, ChatSystems([]))
    assert "chat_systems" in raised.value.errors
    assert not Campaign.objects.filter(slug="no-bots").exists()


def test_each_batch_holds_two_systems_and_a_worker_never_meets_one_twice(client, fakes):
    server = fakes.start(openai_fake.counting)
    systems = [bot_system(server, slug=s) for s in ("a-bot", "b-bot", "c-bot")]
    campaign = chat_campaign(
        systems, config={"conversations_per_system": 2}, max_batches_per_worker=5
    )
    for batch in campaign.batches.all():
        shown = [i.content["meta"]["system"] for i in batch.items.all()]
        assert len(shown) == len(set(shown)) == 2
    first = start(client, campaign)
    met = {i.content["meta"]["system"] for i in items(first)}
    first.status = "submitted"
    first.save(update_fields=["status"])
    response = client.get(f"{campaign.start_url()}?worker=w1")
    assert response.status_code == 200 and "no more work" in response.content.decode()
    assert campaign.assignments.filter(worker__isnull=False).count() == 1 and len(met) == 2


def test_the_item_page_shows_no_system_name_in_the_preview(admin_client, fakes):
    server = fakes.start(openai_fake.counting)
    campaign = chat_campaign([bot_system(server, slug="secret-bot")], batch_size=1)
    page = admin_client.get(
        reverse("annotation:manage-campaign-preview", args=[campaign.slug, 0])
    ).content.decode()
    assert "then rates the conversation" in page and "secret-bot" not in page


def chat_through(client, assignment, item, n=2):
    for k in range(n):
        say(client, assignment, item, f"message {k}", 2 * k)
    client.post(url("end", assignment, item))


def ratings(value="4", prefix="rating_"):
    return {f"{prefix}{d}": value for d in KIND.clean_config({})["dimensions"]}


def submit(client, assignment, item, data):
    return client.post(
        reverse("annotation:submit-item", args=[assignment.public_id, item.pk]), data
    )


def test_a_complete_conversation_is_rated_on_every_dimension(client, fakes):
    server = fakes.start(openai_fake.counting)
    campaign = chat_campaign([bot_system(server, slug="a-bot")], batch_size=1)
    assignment = start(client, campaign)
    item = items(assignment)[0]
    chat_through(client, assignment, item)
    missing = submit(client, assignment, item, {"rating_quality": "5"})
    assert missing.status_code == 400 and "Choose a rating from 1 to 5" in missing.content.decode()
    done = submit(client, assignment, item, ratings("4"))
    assert done.status_code == 302
    payload = assignment.judgments.get().payload
    assert payload["complete"] is True and set(payload["ratings"].values()) == {4}
    assert payload["conversation"].startswith(f"chat-{campaign.slug}-")
    assert "comparison" not in payload


def test_the_second_conversation_of_a_batch_is_compared_with_the_first(client, fakes):
    server = fakes.start(openai_fake.counting)
    campaign = chat_campaign([bot_system(server, slug=s) for s in ("a-bot", "b-bot")])
    assignment = start(client, campaign)
    first, second = items(assignment)
    chat_through(client, assignment, first)
    assert submit(client, assignment, first, ratings("3")).status_code == 302
    chat_through(client, assignment, second)
    page = client.get(assignment.get_absolute_url()).content.decode()
    assert "Compare your two conversations" in page and "Conversation 2" in page
    without = submit(client, assignment, second, ratings("5"))
    assert without.status_code == 400 and "comparison on quality" in without.content.decode()
    done = submit(client, assignment, second, ratings("5") | ratings("left", "compare_"))
    assert done.status_code == 302
    payload = assignment.judgments.get(item=second).payload
    comparison = payload["comparison"]
    assert comparison["a"] == assignment.judgments.get(item=first).payload["conversation"]
    assert comparison["b"] == payload["conversation"]
    assert set(comparison["choices"].values()) == {comparison["left"]}
    assignment.refresh_from_db()
    assert assignment.status == "submitted"


def test_the_export_row_names_the_system_and_the_ratings(client, fakes):
    server = fakes.start(openai_fake.counting)
    campaign = chat_campaign([bot_system(server, slug="a-bot")], batch_size=1)
    assignment = start(client, campaign)
    item = items(assignment)[0]
    chat_through(client, assignment, item)
    submit(client, assignment, item, ratings("2"))
    row = KIND.export_row(assignment.judgments.get())
    assert row["system"] == "a-bot" and row["complete"] is True
    assert row["ratings"]["quality"] == 2 and row["comparison"] is None
    assert row["worker"] == str(assignment.worker.public_id)


def campaign_form(**fields):
    from tests.annotation.test_manage import form_data

    return form_data(**{"task_kind": "chat", "slug": "talks", "title": "Talks", **fields})


def test_staff_create_a_chat_campaign_from_systems_with_endpoints(admin_client, fakes):
    server = fakes.start(openai_fake.counting)
    a, b = bot_system(server, slug="a-bot"), bot_system(server, slug="b-bot")
    response = admin_client.post(
        reverse("annotation:manage-campaign-create"),
        campaign_form(
            chat_systems=[a.slug, b.slug],
            task_config='{"conversations_per_system": 3}',
            redundancy=1,
        ),
    )
    assert response.status_code == 302
    campaign = Campaign.objects.get(slug="talks")
    shown = Counter(i.content["meta"]["system"] for i in campaign.items.all())
    assert shown == {"a-bot": 3, "b-bot": 3} and campaign.batches.count() == 3


def test_a_system_without_an_endpoint_cannot_be_chosen(admin_client, fakes):
    factories.system(slug="no-endpoint")
    response = admin_client.post(
        reverse("annotation:manage-campaign-create"), campaign_form(chat_systems=["no-endpoint"])
    )
    assert response.status_code == 400 and "Select a valid choice" in response.content.decode()
    assert not Campaign.objects.filter(slug="talks").exists()


def test_a_chat_campaign_without_systems_is_refused_on_the_form(admin_client):
    response = admin_client.post(reverse("annotation:manage-campaign-create"), campaign_form())
    assert response.status_code == 400
    assert "Choose at least one system to chat with." in response.content.decode()
    assert not Campaign.objects.exists()


def test_a_likert_campaign_is_built_from_the_complete_chats_only(client, admin_client, fakes):
    server = fakes.start(openai_fake.counting)
    chats = chat_campaign([bot_system(server, slug="a-bot")], batch_size=1, redundancy=2)
    done = start(client, chats, "w1")
    chat_through(client, done, items(done)[0])
    other = Client()
    left_open = start(other, chats, "w2")
    say(other, left_open, items(left_open)[0], "only one message", 0)

    def likert(slug, **extra):
        return admin_client.post(
            reverse("annotation:manage-campaign-create"),
            campaign_form(
                task_kind="likert", slug=slug, chat_campaign=chats.slug, gold_per_batch=0, **extra
            ),
        )

    assert likert("rate-chats").status_code == 302
    rated = Campaign.objects.get(slug="rate-chats")
    shown = set(rated.items.values_list("conversation__external_id", flat=True))
    assert shown == {chat.external_id(done, items(done)[0])}
    assert likert("rate-all-chats", include_incomplete="on").status_code == 302
    everything = Campaign.objects.get(slug="rate-all-chats")
    assert everything.items.count() == 2


def test_a_chat_campaign_without_complete_chats_builds_nothing(admin_client, fakes):
    server = fakes.start(openai_fake.counting)
    chats = chat_campaign([bot_system(server, slug="a-bot")], batch_size=1)
    response = admin_client.post(
        reverse("annotation:manage-campaign-create"),
        campaign_form(task_kind="likert", slug="rate-none", chat_campaign=chats.slug),
    )
    assert response.status_code == 400 and "has no complete conversations yet" in (
        response.content.decode()
    )
    assert not Campaign.objects.filter(slug="rate-none").exists()


def test_staff_are_not_offered_an_endpoint_its_owner_keeps_to_themselves(admin_client, fakes):
    server = fakes.start(openai_fake.counting)
    private = bot_system(server, slug="kept-bot", owner=factories.user(), shared=False)
    response = admin_client.post(
        reverse("annotation:manage-campaign-create"), campaign_form(chat_systems=[private.slug])
    )
    assert response.status_code == 400 and "Select a valid choice" in response.content.decode()
    assert not Campaign.objects.filter(slug="talks").exists()


def test_the_csv_export_has_the_same_columns_for_rated_compared_and_incomplete_chats(
    client, admin_client, fakes
):
    server = fakes.start(openai_fake.counting)
    broken = fakes.start(lambda payload: openai_fake.MALFORMED)
    campaign = chat_campaign(
        [bot_system(server, slug="a-bot"), bot_system(broken, slug="b-bot")],
        config={"dimensions": ["quality"]},
    )
    assignment = start(client, campaign)
    for item in items(assignment):
        chat_through(
            client, assignment, item, n=2 if item.content["meta"]["system"] == "a-bot" else 1
        )
        rated = {"rating_quality": "5"} if item.content["meta"]["system"] == "a-bot" else {}
        assert submit(client, assignment, item, rated).status_code == 302
    response = admin_client.get(
        reverse("annotation:manage-campaign-export-csv", args=[campaign.slug])
    )
    lines = b"".join(response.streaming_content).decode().splitlines()
    header = lines[0].split(",")
    assert {"rating_quality", "choice_quality", "compared_with", "left"} <= set(header)
    assert len(lines) == 3 and all(len(line.split(",")) >= len(header) for line in lines[1:])
    by_system = {j.item.content["meta"]["system"]: j.payload for j in assignment.judgments.all()}
    assert by_system["b-bot"]["complete"] is False and by_system["a-bot"]["ratings"] == {
        "quality": 5
    }


def test_workers_rating_one_system_alike_agree_though_their_chats_differ(client, fakes):
    from annotation.quality import worker_figures

    server = fakes.start(openai_fake.counting)
    campaign = chat_campaign([bot_system(server, slug="a-bot")], batch_size=1, redundancy=2)
    for name in ("w1", "w2"):
        browser = Client()
        assignment = start(browser, campaign, name)
        item = items(assignment)[0]
        chat_through(browser, assignment, item)
        assert submit(browser, assignment, item, ratings("4")).status_code == 302
    figures = worker_figures(campaign)
    assert [f.agreement.value for f in figures] == [1.0, 1.0]
    assert len({j.payload["conversation"] for j in campaign.judgments.all()}) == 2


@pytest.mark.parametrize(
    ("kind", "config"),
    [
        ("likert", {}),
        ("abc_eval", {"behaviour_task": "empathy"}),
        ("comparative", {}),
        ("spot_the_bot", {"segment_lengths": [1, 2]}),
    ],
)
def test_every_conversation_kind_builds_items_from_finished_chats(client, fakes, kind, config):
    from annotation.campaigns import ChatConversations

    server = fakes.start(openai_fake.counting)
    chats = chat_campaign([bot_system(server, slug=s) for s in ("a-bot", "b-bot")])
    assignment = start(client, chats)
    for item in items(assignment):
        chat_through(client, assignment, item)
    judged = Campaign(slug=f"judge-{kind}".replace("_", "-"), title="Judge", task_kind=kind)
    judged.task_config = config
    setup = create_campaign(judged, ChatConversations(chats), gold_per_batch=0)
    shown = judged.items.filter(role="task")
    assert setup.shown == shown.count() > 0
    ids = set(shown.values_list("conversation__external_id", flat=True))
    assert all(i.startswith(f"chat-{chats.slug}-") for i in ids)
