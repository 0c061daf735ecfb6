"""Staff campaign pages: access, creation from responses and from conversations, state
changes, the detail page's figures and queries, and the preview."""

import json
from datetime import timedelta
from decimal import Decimal
from unittest import mock

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.campaigns import (
    available_kinds,
    builds_from_responses,
    builds_from_systems,
    change_status,
)
from annotation.crowd.local import LocalProvider
from annotation.items import add_items
from annotation.kinds import get_kind
from annotation.models import Assignment, Campaign, Item, Judgment
from evalhub.models import Conversation
from tests import factories
from tests.annotation.builders import ab_campaign, ab_spec, campaign
from tests.annotation.test_progress import NOW, judge, shown

pytestmark = pytest.mark.django_db

CONVERSATION_KINDS = [
    key
    for key, _ in available_kinds()
    if not builds_from_responses(get_kind(key)) and not builds_from_systems(get_kind(key))
]
# Test data for kinds that have no usable default config.
KIND_CONFIGS = {"abc_eval": {"behaviour_task": "empathy"}}
GOLD_EXPLANATION = "Speaker 1 is a chatbot; Speaker 2 is a person."


def url(name: str, *args) -> str:
    return reverse(f"annotation:{name}", args=args)


@pytest.fixture
def staff(client):
    client.force_login(factories.user("boss", staff=True))
    return client


def talk(n: int, speakers=("human", "bot-x"), exchanges: int = 5, **extra) -> dict:
    turns = [
        {"speaker": i % 2, "text": f"talk {n}, turn {i}: something to say about the weather"}
        for i in range(2 * exchanges)
    ]
    return {
        "id": f"talk-{n}",
        "domain": "chat",
        "speakers": list(speakers),
        "turns": turns,
        **extra,
    }


def jsonl_file(name: str, *rows) -> SimpleUploadedFile:
    data = "".join(json.dumps(row) + "\n" for row in rows).encode()
    return SimpleUploadedFile(name, data, content_type="application/jsonl")


def talks() -> list[dict]:
    """Human-bot talks with two bots, and one too short for Spot The Bot's segments."""
    return [
        talk(1),
        talk(2, ("human", "bot-y")),
        talk(3, ("bot-x", "human")),
        talk(4, ("bot-y", "human")),
        talk(5, exchanges=1),
    ]


def form_data(**fields) -> dict:
    data = {
        "task_kind": "ab",
        "title": "Greeting test",
        "slug": "greeting-test",
        "instructions": "Pick the better reply.",
        "task_config": "{}",
        "redundancy": 3,
        "batch_size": 2,
        "reward_per_batch": "0.50",
        "max_batches_per_worker": 3,
        "time_limit_minutes": 30,
        "provider": "local",
        "completion_redirect_url": "",
        "training_threshold": "",
        "gold_per_batch": 1,
    }
    data.update(fields)
    return data


@pytest.fixture
def ab_setup():
    """A prompt set of 3, a system and two baselines; baseline-1 repeats the system once."""
    prompt_set = factories.prompt_set(3, slug="greetings")
    system = factories.system(slug="new-bot", name="New Bot")
    first = factories.system(slug="baseline-1", name="Baseline One")
    second = factories.system(slug="baseline-2", name="Baseline Two")
    factories.submission(system, prompt_set)
    factories.submission(first, prompt_set, ["response 1 of new-bot", "other 2", "other 3"])
    factories.submission(second, prompt_set)
    return {
        "prompt_set": "greetings",
        "system": "new-bot",
        "baselines": ["baseline-1", "baseline-2"],
    }


# Access -------------------------------------------------------------------------------


def manage_urls(c: Campaign) -> list[tuple[str, str]]:
    return [
        ("get", url("manage-campaigns")),
        ("get", url("manage-campaign-create")),
        ("get", url("manage-campaign", c.slug)),
        ("get", url("manage-campaign-preview", c.slug, 0)),
        ("get", url("manage-campaign-export-jsonl", c.slug)),
        ("get", url("manage-campaign-export-csv", c.slug)),
        ("post", url("manage-campaign-launch", c.slug)),
        ("post", url("manage-campaign-pause", c.slug)),
        ("post", url("manage-campaign-finish", c.slug)),
    ]


def test_anonymous_visitors_are_sent_to_log_in(client):
    c = ab_campaign(2, status="draft")
    for method, address in manage_urls(c):
        response = getattr(client, method)(address)
        assert response.status_code == 302, address
        assert response["Location"].startswith(reverse("login") + "?next="), address


def test_researchers_are_refused_other_peoples_campaigns(client):
    client.force_login(factories.user("researcher"))
    c = ab_campaign(2, status="draft")
    for method, address in manage_urls(c)[2:]:  # the list (their own) and creating are theirs
        assert getattr(client, method)(address).status_code == 403, address
    c.refresh_from_db()
    assert c.status == "draft"


def test_staff_may_use_every_page(staff):
    c = ab_campaign(2, status="draft")
    for method, address in manage_urls(c):
        response = getattr(staff, method)(address, CONFIRMED if method == "post" else None)
        expected = 302 if method == "post" else 200
        assert response.status_code == expected, address


def test_the_nav_links_staff_to_campaigns_and_researchers_to_their_own(client, staff):
    assert (
        '<a href="/manage/campaigns/">Campaigns</a>' in staff.get(reverse("home")).content.decode()
    )
    client.logout()
    client.force_login(factories.user("researcher"))
    mine = client.get(reverse("home")).content.decode()
    assert '<a href="/manage/campaigns/">My campaigns</a>' in mine
    client.logout()
    assert 'href="/manage/campaigns/"' not in client.get(reverse("home")).content.decode()


def test_unknown_campaign_and_item_are_404(staff):
    assert staff.get(url("manage-campaign", "nope")).status_code == 404
    c = ab_campaign(2)
    assert staff.get(url("manage-campaign-preview", c.slug, 99)).status_code == 404


# List -------------------------------------------------------------------------------


def test_the_list_shows_each_campaign_with_progress(staff):
    c = ab_campaign(2, batch_size=2, redundancy=2, title="Greetings A/B")
    judge(shown(c)[0], "w1", at=NOW, ms=1000)
    html = staff.get(url("manage-campaigns")).content.decode()
    assert "Greetings A/B" in html and c.get_absolute_url() in html
    assert "1 of 4 judgments" in html and "25%" in html
    assert url("manage-campaign-export-csv", c.slug) in html


# Creating from responses ----------------------------------------------------------------


def test_the_form_offers_every_installed_provider(staff):
    html = staff.get(url("manage-campaign-create")).content.decode()
    assert '<option value="prolific">' in html
    assert '<option value="mturk">' in html
    assert "manage.py crowd" in html


def test_the_form_offers_the_workers_languages(staff):
    html = staff.get(url("manage-campaign-create")).content.decode()
    assert '<option value="de">Deutsch</option>' in html and 'name="follow_browser"' in html


def test_staff_create_a_german_campaign_that_follows_the_browser(staff, ab_setup):
    data = form_data(**ab_setup, language="de", follow_browser="on")
    assert staff.post(url("manage-campaign-create"), data).status_code == 302
    c = Campaign.objects.get(slug="greeting-test")
    assert (c.language, c.follow_browser) == ("de", True)


def test_an_unknown_workers_language_is_refused(staff, ab_setup):
    response = staff.post(url("manage-campaign-create"), form_data(**ab_setup, language="fr"))
    assert response.status_code == 400 and not Campaign.objects.exists()
    assert "fr is not one of the available choices" in response.content.decode()


def test_staff_creates_an_ab_campaign_from_latest_submissions(staff, ab_setup):
    response = staff.post(url("manage-campaign-create"), form_data(**ab_setup), follow=True)
    c = Campaign.objects.get(slug="greeting-test")
    assert response.redirect_chain[-1][0] == c.get_absolute_url()
    assert (c.status, c.task_kind, c.owner.username) == ("draft", "ab", "boss")
    # 3 prompts x 2 baselines, one pair identical: 5 shown in 3 batches of 2, 1 automatic.
    assert c.items.filter(batch__isnull=False).count() == 5
    assert c.items.filter(auto_payload__isnull=False).count() == 1
    assert c.batches.count() == 3
    assert Assignment.objects.filter(campaign=c, status="open").count() == 9
    systems = {
        (i.content["meta"]["system_a"], i.content["meta"]["system_b"]) for i in c.items.all()
    }
    assert systems == {("new-bot", "baseline-1"), ("new-bot", "baseline-2")}
    html = response.content.decode()
    assert "5 items in 3 batches, 1 automatic item." in html
    # 3 batches x 3 workers x 0.50
    assert "Cost when every slot is paid: 4.50." in html
    assert "4.50" in html.split('data-testid="cost"')[1]


def test_the_newest_submission_of_each_system_is_used(staff, ab_setup):
    newer = factories.submission(
        Campaign._meta.apps.get_model("evalhub", "System").objects.get(slug="baseline-2"),
        Campaign._meta.apps.get_model("evalhub", "PromptSet").objects.get(slug="greetings"),
        ["newest 1", "newest 2", "newest 3"],
    )
    staff.post(url("manage-campaign-create"), form_data(**ab_setup))
    c = Campaign.objects.get()
    used = set(
        c.items.filter(content__meta__system_b="baseline-2").values_list(
            "response_b__submission", flat=True
        )
    )
    assert used == {newer.pk}


def test_a_baseline_without_a_submission_is_named(staff, ab_setup):
    factories.system(slug="baseline-3", name="Baseline Three")
    data = form_data(**{**ab_setup, "baselines": ["baseline-1", "baseline-3"]})
    response = staff.post(url("manage-campaign-create"), data)
    assert response.status_code == 400
    assert "Baseline Three has no submission on Greetings." in response.content.decode()
    assert not Campaign.objects.exists() and not Item.objects.exists()


def test_the_system_cannot_be_its_own_baseline(staff, ab_setup):
    data = form_data(**{**ab_setup, "baselines": ["new-bot"]})
    response = staff.post(url("manage-campaign-create"), data)
    assert "The system cannot be its own baseline." in response.content.decode()
    assert not Campaign.objects.exists()


def test_an_ab_campaign_needs_its_item_source(staff):
    response = staff.post(url("manage-campaign-create"), form_data())
    assert response.status_code == 400
    # Each on its field, and again in the summary at the top linking to the field.
    page = response.content.decode()
    assert page.count("Required for this task kind.") == 6
    for field in ("prompt_set", "system", "baselines"):
        assert f'href="#id_{field}"' in page


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"task_config": "{oops"}, "Not valid JSON: Expecting property name enclosed in double"),
        ({"task_config": "[1]"}, "The task config must be a JSON object"),
        ({"provider": "nope"}, "Select a valid choice. nope is not one of the available"),
        ({"slug": "new"}, "&#x27;new&#x27; is reserved"),
        ({"redundancy": 0}, "Ensure this value is greater than or equal to 1."),
    ],
)
def test_field_errors_are_shown_and_the_answers_kept(staff, ab_setup, fields, message):
    response = staff.post(url("manage-campaign-create"), form_data(**ab_setup, **fields))
    html = response.content.decode()
    assert response.status_code == 400
    assert message in html
    assert 'value="Greeting test"' in html and "Pick the better reply." in html
    assert not Campaign.objects.exists()


def test_a_taken_slug_is_refused(staff, ab_setup):
    ab_campaign(2, slug="greeting-test")
    response = staff.post(url("manage-campaign-create"), form_data(**ab_setup))
    assert "Campaign with this Slug already exists." in response.content.decode()
    assert Campaign.objects.count() == 1


# Creating from conversations ----------------------------------------------------------


@pytest.mark.parametrize("kind", CONVERSATION_KINDS)
def test_staff_creates_a_campaign_of_each_conversation_kind(staff, kind):
    data = form_data(
        task_kind=kind,
        slug=f"{kind.replace('_', '-')}-test",
        task_config=json.dumps(KIND_CONFIGS.get(kind, {})),
        conversations=jsonl_file("talks.jsonl", *talks()),
    )
    response = staff.post(url("manage-campaign-create"), data, follow=True)
    assert response.status_code == 200, response.content.decode()[:2000]
    c = Campaign.objects.get()
    assert c.task_kind == kind and c.task_config == get_kind(kind).clean_config(c.task_config)
    assert Conversation.objects.count() == 5
    task_items = c.items.filter(role="task", batch__isnull=False)
    assert task_items.exists()
    # A k-way ranking links its conversations (`shown_conversations`) instead.
    shown = set(task_items.values_list("conversation__external_id", flat=True))
    shown |= set(task_items.values_list("shown_conversations__external_id", flat=True))
    assert shown - {None} and shown - {None} <= {f"talk-{n}" for n in range(1, 6)}
    assert "5 imported, 0 already in the catalog" in response.content.decode()
    # Every kind of item renders for the preview.
    for position in c.items.filter(auto_payload__isnull=True).values_list("position", flat=True)[
        :3
    ]:
        assert staff.get(url("manage-campaign-preview", c.slug, position)).status_code == 200


@pytest.mark.skipif("spot_the_bot" not in CONVERSATION_KINDS, reason="needs Spot The Bot")
def test_conversations_that_give_no_item_are_counted_as_skipped(staff):
    data = form_data(
        task_kind="spot_the_bot",
        task_config='{"segment_lengths": [2, 3]}',
        conversations=jsonl_file("talks.jsonl", *talks()),
    )
    response = staff.post(url("manage-campaign-create"), data, follow=True)
    assert "8 items in 4 batches" in response.content.decode()
    assert "1 conversation skipped (no item)" in response.content.decode()


@pytest.mark.skipif("spot_the_bot" not in CONVERSATION_KINDS, reason="needs Spot The Bot")
def test_gold_and_training_items_come_from_a_second_file(staff):
    gold_rows = [
        talk(
            11,
            ("bot-x", "human"),
            role="gold",
            gold={"labels": ["bot", "human"], "explanation": GOLD_EXPLANATION},
        ),
        talk(12, ("human", "human"), role="training", gold={"labels": ["human", "human"]}),
    ]
    data = form_data(
        task_kind="spot_the_bot",
        task_config='{"segment_lengths": [2]}',
        conversations=jsonl_file("talks.jsonl", *talks()[:4]),
        gold_items=jsonl_file("gold.jsonl", *gold_rows),
        batch_size=3,  # two segments and the check
    )
    response = staff.post(url("manage-campaign-create"), data, follow=True)
    assert response.status_code == 200
    c = Campaign.objects.get()
    gold = c.items.filter(role="gold")
    assert gold.count() == c.batches.count() == 2
    assert all(item.gold["explanation"] == GOLD_EXPLANATION for item in gold)
    assert all(item.conversation.external_id == "talk-11" for item in gold)
    training = c.items.get(role="training")
    assert (training.batch, training.gold) == (None, {"labels": ["human", "human"]})
    preview = staff.get(url("manage-campaign-preview", c.slug, gold[0].position))
    assert preview.status_code == 200
    assert GOLD_EXPLANATION not in preview.content.decode()


@pytest.mark.skipif("spot_the_bot" not in CONVERSATION_KINDS, reason="needs Spot The Bot")
def test_a_gold_conversation_may_not_also_be_a_task(staff):
    gold = talk(2, ("human", "bot-y"), role="gold", gold={"labels": ["human", "bot"]})
    data = form_data(
        task_kind="spot_the_bot",
        conversations=jsonl_file("talks.jsonl", *talks()),
        gold_items=jsonl_file("gold.jsonl", gold),
    )
    response = staff.post(url("manage-campaign-create"), data)
    assert "line 1: conversation &#x27;talk-2&#x27; is also in the conversations file." in (
        response.content.decode()
    )
    assert not Campaign.objects.exists() and not Conversation.objects.exists()


@pytest.mark.skipif("spot_the_bot" not in CONVERSATION_KINDS, reason="needs Spot The Bot")
def test_a_malformed_gold_answer_is_refused_with_its_line_and_nothing_is_written(staff):
    rows = [
        talk(11, ("bot-x", "human"), role="gold", gold={"labels": ["bot", "human"]}),
        talk(12, ("bot-x", "human"), role="gold", gold={"labels": ["bot"]}),
        talk(13, ("human", "human"), role="training", gold={"labels": ["human", "alien"]}),
    ]
    data = form_data(
        task_kind="spot_the_bot",
        task_config='{"segment_lengths": [2]}',
        conversations=jsonl_file("talks.jsonl", *talks()[:4]),
        gold_items=jsonl_file("gold.jsonl", *rows),
    )
    response = staff.post(url("manage-campaign-create"), data)
    page = response.content.decode()
    assert "line 2: &#x27;labels&#x27; must hold one label per speaker (2)." in page
    assert "line 3: the label of " in page and "not &#x27;alien&#x27;." in page
    assert "line 1:" not in page
    assert not Campaign.objects.exists() and not Conversation.objects.exists()


@pytest.mark.skipif("spot_the_bot" not in CONVERSATION_KINDS, reason="needs Spot The Bot")
def test_files_that_build_nothing_leave_nothing_behind(staff):
    data = form_data(
        task_kind="spot_the_bot",
        task_config='{"segment_lengths": [9]}',
        conversations=jsonl_file("talks.jsonl", *talks()),
    )
    response = staff.post(url("manage-campaign-create"), data)
    assert "Spot The Bot builds no items from these 5 conversations" in response.content.decode()
    # The import ran inside the campaign's transaction, and was rolled back with it.
    assert not Campaign.objects.exists() and not Conversation.objects.exists()
    short_gold = talk(9, ("bot-x", "human"), exchanges=1, role="gold", gold={"labels": ["bot"]})
    data = form_data(
        task_kind="spot_the_bot",
        task_config='{"segment_lengths": [2]}',
        conversations=jsonl_file("talks.jsonl", *talks()),
        gold_items=jsonl_file("gold.jsonl", short_gold),
    )
    response = staff.post(url("manage-campaign-create"), data)
    assert "line 1: Spot The Bot builds no item from this conversation." in (
        response.content.decode()
    )
    assert not Campaign.objects.exists() and not Conversation.objects.exists()


@pytest.mark.parametrize("kind", CONVERSATION_KINDS)
def test_a_bad_conversations_file_is_refused_with_line_numbers(staff, kind):
    rows = [talk(1), {**talk(2), "speakers": ["human"]}, {**talk(3), "id": "talk 3"}]
    data = form_data(
        task_kind=kind,
        task_config=json.dumps(KIND_CONFIGS.get(kind, {})),
        conversations=jsonl_file("talks.jsonl", *rows),
    )
    response = staff.post(url("manage-campaign-create"), data)
    html = response.content.decode()
    assert response.status_code == 400
    assert "line 2: &#x27;speakers&#x27; must be a list of two or more speakers." in html
    assert "line 3: the id &#x27;talk 3&#x27; contains whitespace." in html
    assert "choose it again" in html
    assert not Campaign.objects.exists() and not Conversation.objects.exists()


@pytest.mark.parametrize("kind", CONVERSATION_KINDS)
def test_a_conversation_kind_needs_a_file(staff, kind):
    data = form_data(task_kind=kind, task_config=json.dumps(KIND_CONFIGS.get(kind, {})))
    response = staff.post(url("manage-campaign-create"), data)
    assert "Required for this task kind." in response.content.decode()
    assert not Campaign.objects.exists()


@pytest.mark.skipif("spot_the_bot" not in CONVERSATION_KINDS, reason="needs Spot The Bot")
def test_the_kinds_config_errors_are_shown_on_the_config_field(staff):
    data = form_data(
        task_kind="spot_the_bot",
        task_config='{"segment_lengths": [0]}',
        conversations=jsonl_file("talks.jsonl", *talks()),
    )
    response = staff.post(url("manage-campaign-create"), data)
    html = response.content.decode()
    config_field = html.split('name="task_config"')[1].split("</div>")[0]
    assert "segment_lengths must be a list of distinct whole numbers" in config_field
    assert not Conversation.objects.exists()


# Launch, pause, finish -----------------------------------------------------------------


# The confirmation page's answer (issue 14): a bare POST only asks.
CONFIRMED = {"confirmed": "yes"}


def draft() -> Campaign:
    c = campaign("ab", status="draft")
    add_items(c, [ab_spec(i) for i in range(3)])
    return c


def test_launch_pause_resume_finish(staff, monkeypatch):
    calls = []
    for hook in ("launch", "pause", "finish"):
        monkeypatch.setattr(
            LocalProvider, hook, lambda self, c, hook=hook: calls.append((hook, c.slug))
        )
    c = draft()
    staff.post(url("manage-campaign-launch", c.slug), CONFIRMED)
    c.refresh_from_db()
    launched = c.launched_at
    assert c.status == "live" and launched is not None
    staff.post(url("manage-campaign-pause", c.slug), CONFIRMED)
    c.refresh_from_db()
    assert c.status == "paused"
    staff.post(url("manage-campaign-launch", c.slug), CONFIRMED)
    c.refresh_from_db()
    assert c.status == "live" and c.launched_at == launched
    staff.post(url("manage-campaign-finish", c.slug), CONFIRMED)
    c.refresh_from_db()
    assert c.status == "finished" and c.finished_at is not None
    assert calls == [(hook, c.slug) for hook in ("launch", "pause", "launch", "finish")]


@pytest.mark.parametrize(
    "action, status", [("launch", "draft"), ("pause", "live"), ("finish", "live")]
)
def test_state_changes_only_by_post(staff, action, status):
    c = draft()
    Campaign.objects.filter(pk=c.pk).update(status=status)
    assert staff.get(url(f"manage-campaign-{action}", c.slug)).status_code == 405
    assert Campaign.objects.get(pk=c.pk).status == status


@pytest.mark.parametrize(
    "action, status, verb",
    [("launch", "draft", "Launch"), ("pause", "live", "Pause"), ("finish", "live", "Finish")],
)
def test_a_state_change_asks_for_confirmation_first(staff, action, status, verb):
    c = draft()
    Campaign.objects.filter(pk=c.pk).update(status=status)
    response = staff.post(url(f"manage-campaign-{action}", c.slug))
    page = response.content.decode()
    assert response.status_code == 200
    assert f"{verb} “{c.title}”?" in page and 'name="confirmed" value="yes"' in page
    assert c.get_absolute_url() in page  # Cancel goes back
    assert Campaign.objects.get(pk=c.pk).status == status


def test_a_refused_change_says_why_and_changes_nothing(staff):
    c = draft()
    response = staff.post(url("manage-campaign-pause", c.slug), CONFIRMED, follow=True)
    assert "A draft campaign cannot pause." in response.content.decode()
    c.refresh_from_db()
    assert c.status == "draft"
    empty = campaign("ab", status="draft")
    response = staff.post(url("manage-campaign-launch", empty.slug), CONFIRMED, follow=True)
    assert "no items to show" in response.content.decode()
    empty.refresh_from_db()
    assert empty.status == "draft"


def test_a_failing_provider_hook_leaves_the_campaign_as_it_was(monkeypatch):
    def broken(self, c):
        raise RuntimeError("platform down")

    monkeypatch.setattr(LocalProvider, "launch", broken)
    c = draft()
    with pytest.raises(RuntimeError):
        change_status(c, "launch")
    c.refresh_from_db()
    assert (c.status, c.launched_at) == ("draft", None)


# Detail -----------------------------------------------------------------------------------


def test_the_detail_page_shows_the_link_progress_and_previews(staff):
    c = ab_campaign(4, batch_size=4, redundancy=1, gold=1, reward_per_batch=Decimal("2"))
    for item in shown(c)[:2]:
        judge(item, "w1", at=NOW - timedelta(minutes=10), ms=6000)
    html = staff.get(url("manage-campaign", c.slug)).content.decode()
    assert f"http://testserver/work/{c.slug}/" in html
    assert "2 / 4</strong> items done (50%)" in html
    assert "6.0 s</strong> median time per item" in html
    for shape in ("Task item", "Gold / attention check"):
        assert shape in html
    assert url("manage-campaign-preview", c.slug, 0) in html
    assert "2.00</strong> cost: 1 batch ×" in html
    assert url("quality-workers", c.slug) in html


def make_judged(n_items: int, n_judged: int) -> Campaign:
    c = ab_campaign(n_items, batch_size=5, redundancy=2, gold=2)
    for n, item in enumerate(shown(c)[:n_judged]):
        judge(item, f"w{n % 2}", at=NOW - timedelta(minutes=n), ms=1000 + n)
    return c


def test_detail_queries_do_not_depend_on_campaign_size(staff, django_assert_max_num_queries):
    counts = []
    for c in (make_judged(3, 1), make_judged(40, 30)):
        with CaptureQueriesContext(connection) as captured:
            assert staff.get(url("manage-campaign", c.slug)).status_code == 200
        counts.append(len(captured))
    assert counts[0] == counts[1]
    # 12, 3 for the oversight panel (money spent: assignments and bonuses; the plot), and
    # 1 for the stopping rule of an A/B campaign (its judgments' pairs: annotation/pairing.py).
    with django_assert_max_num_queries(18):
        staff.get(url("manage-campaign", c.slug))


# Preview -----------------------------------------------------------------------------------


def test_the_preview_is_the_workers_page_posting_to_itself(staff):
    c = ab_campaign(2, batch_size=2, gold=1)
    gold = c.items.get(role="gold")
    here = url("manage-campaign-preview", c.slug, gold.position)
    html = staff.get(here).content.decode()
    assert gold.content["left"] in html and "Which response is the better next turn?" in html
    assert f'action="{here}"' in html
    assert "/work/assignment/" not in html
    assert "Response a answers the question." not in html  # the gold explanation


def test_a_preview_answer_is_checked_and_never_stored(staff):
    c = ab_campaign(2, batch_size=2, gold=1)
    gold = c.items.get(role="gold")
    here = url("manage-campaign-preview", c.slug, gold.position)
    missing = staff.post(here, {})
    assert missing.status_code == 400
    assert "Choose an answer for which response is better." in missing.content.decode()
    side = "left" if gold.content["left_is"] == "a" else "right"
    answered = staff.post(here, {"choice": side})
    html = answered.content.decode()
    assert answered.status_code == 200 and "The answer is valid." in html
    assert "&quot;choice&quot;: &quot;a&quot;" in html and "Correct." in html
    assert not Judgment.objects.exists()


@pytest.mark.skipif("spot_the_bot" not in CONVERSATION_KINDS, reason="needs Spot The Bot")
def test_a_preview_keeps_the_answers_given_when_one_is_missing(staff):
    data = form_data(
        task_kind="spot_the_bot",
        task_config='{"segment_lengths": [2]}',
        conversations=jsonl_file("talks.jsonl", *talks()[:2]),
    )
    staff.post(url("manage-campaign-create"), data)
    c = Campaign.objects.get()
    here = url("manage-campaign-preview", c.slug, 0)
    response = staff.post(here, {"label_0": "bot"})
    html = response.content.decode()
    assert response.status_code == 400
    assert 'name="label_0" value="bot" checked' in html
    assert "Choose an answer for Speaker 2." in html


def test_an_automatic_item_is_explained_not_shown(staff, ab_setup):
    staff.post(url("manage-campaign-create"), form_data(**ab_setup))
    c = Campaign.objects.get()
    auto = c.items.get(auto_payload__isnull=False)
    html = staff.get(url("manage-campaign-preview", c.slug, auto.position)).content.decode()
    assert "never shown" in html and "identical responses" in html


def test_a_campaign_slug_taken_meanwhile_is_a_field_error_not_a_500(staff, ab_setup):
    """Two creations at once both pass the form's check; the second meets the constraint."""
    staff.post(url("manage-campaign-create"), form_data(**ab_setup))
    with mock.patch("django.forms.models.BaseModelForm.validate_unique", lambda form: None):
        response = staff.post(url("manage-campaign-create"), form_data(**ab_setup))
    assert response.status_code in (200, 400)
    assert "already exists; choose another" in response.content.decode()
    assert Campaign.objects.filter(slug="greeting-test").count() == 1


def test_the_chat_campaign_page_says_when_a_chatbots_chat_share_is_spent(client):
    from endpoints import budget as endpoint_budget
    from tests.annotation.chat_setup import bot_system, chat_campaign

    class Offline:  # no request is sent: the budget is charged directly
        base_url = "http://127.0.0.1:9/v1"

    owner = factories.user()
    spent = bot_system(Offline, slug="spent-bot", owner=owner)
    fresh = bot_system(Offline, slug="fresh-bot", owner=owner)
    for system in (spent, fresh):
        system.endpoint.daily_budget, system.endpoint.chat_share = 10, 20  # two chat requests
        system.endpoint.save()
    campaign = chat_campaign([spent, fresh], owner=owner)
    client.force_login(owner)
    page = client.get(url("manage-campaign", campaign.slug)).content.decode()
    assert 'data-testid="chat-budgets"' in page and "chat-budget-spent" not in page
    for _ in range(2):
        assert endpoint_budget.spend(spent.endpoint.pk, 10, chat_limit=2)
    page = client.get(url("manage-campaign", campaign.slug)).content.decode()
    [notice] = page.split('data-testid="chat-budget-spent">')[1:]
    assert notice.startswith("The chat share of <code>spent-bot</code> is spent for today")
    assert "fresh-bot" not in notice.split("</p>")[0]
    assert "<code>spent-bot</code>: <strong>2</strong> of 2 chat requests" in page
    assert "<code>fresh-bot</code>: <strong>0</strong> of 2 chat requests" in page


def test_a_campaign_that_does_not_chat_shows_no_chat_budgets(staff):
    c = ab_campaign()
    page = staff.get(url("manage-campaign", c.slug)).content.decode()
    assert "chat-budgets" not in page


def test_the_chat_campaign_page_shows_its_chatbots_latest_endpoint_errors(client):
    from endpoints.calls import record
    from tests.annotation.chat_setup import bot_system, chat_campaign

    class Offline:
        base_url = "http://127.0.0.1:9/v1"

    owner = factories.user()
    bot = bot_system(Offline, slug="failing-bot", owner=owner)
    campaign = chat_campaign([bot], owner=owner)
    for _ in range(3):
        record(bot.endpoint.pk, purpose="chat", status="timeout", latency_ms=20_000)
    client.force_login(owner)

    page = client.get(url("manage-campaign", campaign.slug)).content.decode()

    [section] = page.split('id="endpoint-errors">')[1:]
    assert "<code>failing-bot</code>" in section and "timed out" in section and "3×" in section


def test_the_confirmation_of_a_paid_launch_keeps_the_ticked_money_confirmation(staff):
    c = draft()
    Campaign.objects.filter(pk=c.pk).update(provider="prolific", reward_per_batch=Decimal("1.00"))

    page = staff.post(url("manage-campaign-launch", c.slug), {"confirm": "yes"}).content.decode()

    assert 'name="confirm" value="yes" required checked' in page
    assert Campaign.objects.get(pk=c.pk).status == "draft"


def test_the_campaign_page_lists_what_a_platform_launch_lacks(staff, settings):
    settings.EVALHUB_PUBLIC_URL = "http://127.0.0.1:8000"
    settings.EVALHUB_PROLIFIC_TOKEN = ""
    c = draft()
    Campaign.objects.filter(pk=c.pk).update(provider="prolific", reward_per_batch=Decimal("0"))

    page = staff.get(url("manage-campaign", c.slug)).content.decode()

    [listed] = page.split('data-testid="launch-problems"')[1:]
    listed = listed.split("</div>")[0]
    for missing in ("EVALHUB_PUBLIC_URL", "reward per batch above 0", "EVALHUB_PROLIFIC_TOKEN"):
        assert missing in listed


def test_a_campaign_ready_for_its_platform_lists_nothing_missing(staff, settings):
    settings.EVALHUB_PUBLIC_URL = "https://evalhub.example.org"
    settings.EVALHUB_PROLIFIC_TOKEN = "sekrit"
    c = draft()
    Campaign.objects.filter(pk=c.pk).update(provider="prolific", reward_per_batch=Decimal("1.00"))

    page = staff.get(url("manage-campaign", c.slug)).content.decode()

    assert "launch-problems" not in page


def test_a_campaign_requiring_training_it_lacks_is_told_to_staff(staff):
    from evalhub.models import Notice

    data = form_data(
        task_kind="abc_eval",
        slug="untrained",
        task_config=json.dumps(KIND_CONFIGS["abc_eval"]),
        conversations=jsonl_file("talks.jsonl", *talks()),
        requires_training="on",
    )

    staff.post(url("manage-campaign-create"), data, follow=True)

    c = Campaign.objects.get(slug="untrained")
    assert c.requires_training
    [notice] = Notice.objects.filter(kind="training_missing")
    assert "requires training but has no training items" in notice.text
    assert notice.url == c.get_absolute_url()


def test_a_researcher_lists_only_their_own_campaigns(client):
    researcher = factories.user("researcher")
    ab_campaign(2, title="Mine", owner=researcher)
    ab_campaign(2, title="Somebody else's")
    client.force_login(researcher)

    page = client.get(url("manage-campaigns")).content.decode()

    assert "<h1>My campaigns</h1>" in page
    assert ">Mine</a>" in page and "Somebody else" not in page


def test_the_campaign_page_lists_the_ways_in(staff):
    c = ab_campaign(2, status="live", allow_worker_param=True)

    page = staff.get(url("manage-campaign", c.slug)).content.decode()

    [ways] = page.split('data-testid="ways-in">')[1:]
    assert "?worker=&lt;participant id&gt;" in ways.split("</ul>")[0]


@pytest.mark.parametrize("kind", CONVERSATION_KINDS)
def test_a_researcher_creates_a_campaign_of_each_kind_and_owns_it(client, kind):
    researcher = factories.user("researcher")
    client.force_login(researcher)
    data = form_data(
        task_kind=kind,
        slug=f"mine-{kind.replace('_', '-')}",
        task_config=json.dumps(KIND_CONFIGS.get(kind, {})),
        conversations=jsonl_file("talks.jsonl", *talks()),
    )

    response = client.post(url("manage-campaign-create"), data)

    c = Campaign.objects.get()
    assert response.status_code == 302 and response["Location"] == c.get_absolute_url()
    assert (c.owner, c.status, c.task_kind) == (researcher, "draft", kind)
    assert client.get(c.get_absolute_url()).status_code == 200


def test_a_researcher_cannot_build_a_campaign_on_another_owners_private_system(client):
    from evalhub.models import System

    prompt_set = factories.prompt_set(3, slug="greetings")
    private = factories.system(factories.user("other"), slug="secret-bot", name="Secret")
    System.objects.filter(pk=private.pk).update(visibility="private")
    factories.submission(private, prompt_set)
    public = factories.system(slug="baseline-1", name="Baseline One")
    factories.submission(public, prompt_set)
    client.force_login(factories.user("researcher"))

    response = client.post(
        url("manage-campaign-create"),
        form_data(prompt_set="greetings", system="secret-bot", baselines=["baseline-1"]),
    )

    assert response.status_code == 400
    assert not Campaign.objects.exists()


def test_the_owner_sets_the_reward_and_budget_before_launch(client):
    researcher = factories.user("researcher")
    c = ab_campaign(2, status="draft", owner=researcher)
    client.force_login(researcher)
    data = {
        "reward_per_batch": "1.50",
        "budget": "20.00",
        "max_batches_per_worker": "2",
        "time_limit_minutes": "45",
        "completion_redirect_url": "",
    }

    response = client.post(url("manage-campaign-settings", c.slug), data, follow=True)

    c.refresh_from_db()
    assert "Saved the campaign" in response.content.decode()
    assert (c.reward_per_batch, c.budget, c.max_batches_per_worker, c.time_limit_minutes) == (
        Decimal("1.50"),
        Decimal("20.00"),
        2,
        45,
    )


def test_the_owner_moves_a_draft_onto_mturk_production(client):
    # A campaign a tournament generated starts on its link: its page is where it moves.
    researcher = factories.user("researcher")
    c = ab_campaign(2, status="draft", owner=researcher)
    client.force_login(researcher)
    data = {
        "provider": "mturk",
        "mturk_site": "production",
        "reward_per_batch": "1.50",
        "max_batches_per_worker": "2",
        "time_limit_minutes": "45",
    }

    response = client.post(url("manage-campaign-settings", c.slug), data, follow=True)

    c.refresh_from_db()
    assert "Saved the campaign" in response.content.decode()
    assert (c.provider, c.platform_sandbox, c.reward_per_batch) == (
        "mturk",
        False,
        Decimal("1.50"),
    )


def test_a_campaign_posted_on_its_platform_stays_there(client):
    researcher = factories.user("researcher")
    c = ab_campaign(2, status="draft", owner=researcher, provider="prolific")
    Campaign.objects.filter(pk=c.pk).update(platform_ref="study1")
    client.force_login(researcher)
    data = {"provider": "mturk", "max_batches_per_worker": "2", "time_limit_minutes": "45"}

    response = client.post(url("manage-campaign-settings", c.slug), data, follow=True)

    assert "already posted on Prolific" in response.content.decode()
    assert Campaign.objects.filter(pk=c.pk, provider="prolific", time_limit_minutes=45).count() == 0
    assert Campaign.objects.get(pk=c.pk).provider == "prolific"


def test_a_reward_out_of_range_is_refused_and_nothing_changes(client):
    researcher = factories.user("researcher")
    c = ab_campaign(2, status="draft", owner=researcher)
    client.force_login(researcher)
    data = {"reward_per_batch": "-1", "max_batches_per_worker": "2", "time_limit_minutes": "45"}

    client.post(url("manage-campaign-settings", c.slug), data)

    c.refresh_from_db()
    assert c.reward_per_batch == Decimal("0") and c.time_limit_minutes != 45


def test_the_pay_is_fixed_once_launched(client):
    researcher = factories.user("researcher")
    c = ab_campaign(2, status="live", owner=researcher)
    client.force_login(researcher)

    response = client.post(
        url("manage-campaign-settings", c.slug), {"reward_per_batch": "9.00"}, follow=True
    )

    c.refresh_from_db()
    assert "fixed once a campaign has launched" in response.content.decode()
    assert c.reward_per_batch == Decimal("0")


def test_a_refused_form_with_a_file_says_to_choose_it_again(staff):
    data = form_data(
        task_kind="likert",
        slug="",  # refused: a slug is needed
        title="",
        conversations=jsonl_file("talks.jsonl", *talks()),
    )

    response = staff.post(url("manage-campaign-create"), data)

    page = response.content.decode()
    assert response.status_code == 400 and not Campaign.objects.exists()
    assert "a browser does not keep a chosen file after a refused form, so choose it again" in page


def test_each_item_source_names_the_kinds_it_serves(staff):
    page = staff.get(url("manage-campaign-create")).content.decode()

    assert 'class="source responses" data-kinds="ab ' in page
    assert "js/campaign_form.js" in page


def test_a_researcher_past_the_campaigns_quota_is_refused_on_the_form(client, settings):
    settings.EVALHUB_QUOTA_CAMPAIGNS = 1
    researcher = factories.user("researcher")
    ab_campaign(2, owner=researcher)
    client.force_login(researcher)
    data = form_data(
        task_kind="likert",
        slug="one-too-many",
        conversations=jsonl_file("talks.jsonl", *talks()),
    )

    response = client.post(url("manage-campaign-create"), data)

    assert response.status_code == 400
    assert not Campaign.objects.filter(slug="one-too-many").exists()
