"""The arena's battle pages as a German crowd campaign's voter sees them: no English string
from their platform's link to their completion code (the battle pages, a gold battle, the
refusals, a model's failure, the script's words), while the arena's own visitors keep the
English page. The check is tests/annotation/test_worker_language.py's: a word of the
catalog's English source strings that no German translation uses must not be read on the
page. The campaign's and the arena's own texts (the arena's name, the gold battles, the
models' answers) are German here, as a German study's would be."""

import json
import re
import uuid
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import translation

from annotation.models import Assignment, Worker
from arenas.answering import BUSY_WAIT, UNUSABLE, shown_error
from arenas.crowd import launch
from arenas.models import Battle, BattleAnswer
from tests import factories
from tests.annotation.test_worker_language import ENGLISH_ONLY, assert_german, english_left
from tests.arenas.crowd_setup import crowd_arena, prolific_fake, setup
from tests.endpoints import sse_fake

pytestmark = pytest.mark.django_db(transaction=True)
PID = "5f0c1a2b3c4d5e6f7a8b9c0d"
SESSION = "60aa1a2b3c4d5e6f7a8b9c0d"
GERMAN_GOLD = [
    ("Wie viel ist 2 + 2?", "2 + 2 ist 4.", "2 + 2 ist 5.", "first"),
]


@pytest.fixture
def launched(settings, monkeypatch):
    """A German arena launched on Prolific's fake: one participant, three battles, one gold."""
    with prolific_fake(settings, monkeypatch), sse_fake.StreamingPool() as pool:
        one = pool.start(sse_fake.words("Wellen ", "kommen ", "vom ", "Wind."))
        two = pool.start(sse_fake.words("Der ", "Mond ", "zieht."))
        made = crowd_arena(urls=(one.base_url, two.base_url), gold=GERMAN_GOLD, name="Wellen-Arena")
        result = launch(
            made,
            setup(
                participants=1,
                battles_per_participant=3,
                budget=Decimal("5.00"),
                language="de",
            ),
            factories.user("boss", staff=True),
            confirm=True,
        )
        yield made, result.campaign


def arrive(client, campaign):
    query = {"PROLIFIC_PID": PID, "STUDY_ID": campaign.platform_ref, "SESSION_ID": SESSION}
    return client.get(reverse("annotation:start", args=[campaign.slug]), query, follow=True)


def new_url(made):
    return reverse("arenas:battle-new", args=[made.slug])


def battle_of(url) -> Battle:
    return Battle.objects.get(public_id=url.rstrip("/").split("/")[-1])


def next_battle(client, made, n=1) -> Battle:
    """The batch's next battle: a gold one shown, or a live one started with a German
    prompt (the page without JavaScript, which waits for both answers)."""
    page = client.get(new_url(made))
    if page.status_code == 302:
        return battle_of(page["Location"])
    started = client.post(
        reverse("arenas:battle-start", args=[made.slug]),
        {"prompt": f"Warum gibt es Wellen? Frage {n}."},
    )
    assert started.status_code == 302, started.content
    return battle_of(started["Location"])


def json_post(client, url, data):
    return client.post(url, data, headers={"accept": "application/json"})


def german_words_only(text: str) -> bool:
    return english_left_of(text) == set()


def english_left_of(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[^\W\d_]+", text)} & ENGLISH_ONLY


def test_the_launch_makes_a_german_campaign_with_german_words(launched):
    _, campaign = launched
    assert campaign.language == "de"
    assert campaign.title == "Wellen-Arena: Chatbot-Kämpfe"
    assert campaign.instructions.startswith("Schreiben Sie zwei anonymen Chatbots")
    assert german_words_only(campaign.title + " " + campaign.instructions)


def test_a_german_voter_reads_no_english_from_the_link_to_the_code(client, launched):
    made, campaign = launched
    landed = arrive(client, campaign)
    assert landed.request["PATH_INFO"].startswith(f"/arenas/{made.slug}/")
    assert_german(landed)
    sources = []
    for n in range(1, 4):
        page = client.get(new_url(made), follow=True)
        assert_german(page)  # the new battle's page, or the gold battle shown
        battle = next_battle(client, made, n)
        sources.append(battle.source)
        answered = client.get(battle.get_absolute_url())
        assert_german(answered)  # both answers, the vote's buttons
        assert "Welche Antwort ist besser?" in answered.content.decode()
        voted = client.post(
            reverse("arenas:vote", args=[made.slug, battle.public_id]),
            {"vote": "tie"},
            follow=True,
        )
        assert_german(voted)  # the reveal
        assert "Ihre Stimme: Gleichstand." in voted.content.decode()
        assert Battle.objects.get(pk=battle.pk).vote == "tie"
    assert sorted(sources) == ["gold", "live", "live"]
    done = client.get(new_url(made), follow=True)
    assert_german(done)
    assignment = Assignment.objects.get(campaign=campaign)
    assert assignment.status == "submitted"
    assert assignment.completion_code in done.content.decode()


def test_the_script_is_given_german_words(client, launched):
    made, campaign = launched
    arrive(client, campaign)
    battle = next_battle(client, made)
    page = client.get(battle.get_absolute_url())
    assert_german(page)
    html = page.content.decode()
    assert 'data-text-voted="Ihre Stimme: {vote}."' in html
    assert 'data-text-model="Modell {side}"' in html
    assert 'data-text-failed="Etwas ist schiefgegangen; bitte versuchen Sie es erneut."' in html


def test_a_battles_refusals_are_german(client, launched):
    made, campaign = launched
    arrive(client, campaign)
    battle = next_battle(client, made)
    vote_url = reverse("arenas:vote", args=[made.slug, battle.public_id])

    wrong = json_post(client, vote_url, {"vote": "maybe"})
    assert wrong.status_code == 400
    message = wrong.json()["errors"][0]["message"]
    assert message.startswith("Wählen Sie „A ist besser“")
    assert german_words_only(message)
    assert Battle.objects.get(pk=battle.pk).vote == ""

    assert json_post(client, vote_url, {"vote": "a_better"}).status_code == 200
    again = json_post(client, vote_url, {"vote": "b_better"})
    assert again.status_code == 400
    assert again.json()["errors"][0]["message"] == "Über diesen Kampf wurde bereits abgestimmt."
    assert Battle.objects.get(pk=battle.pk).vote == "a_better"

    more = json_post(
        client,
        reverse("arenas:turn", args=[made.slug, battle.public_id]),
        {"prompt": "Noch eine Frage."},
    )
    assert more.status_code == 400
    assert more.json()["errors"][0]["message"] == (
        "Über diesen Kampf wurde abgestimmt: Beginnen Sie eine neue Runde."
    )
    assert battle.battle_turns.count() == 1


def test_a_refusal_on_the_page_is_german(client, launched):
    # Without JavaScript a refusal comes back as the battle page's message.
    made, campaign = launched
    arrive(client, campaign)
    battle = next_battle(client, made)
    url = reverse("arenas:vote", args=[made.slug, battle.public_id])
    page = client.post(url, {"vote": "maybe"}, follow=True)
    assert_german(page)
    assert "Wählen Sie „A ist besser“" in page.content.decode()
    assert Battle.objects.get(pk=battle.pk).vote == ""


def test_a_blocked_voter_is_refused_in_german(client, launched):
    made, campaign = launched
    arrive(client, campaign)
    Worker.objects.filter(external_id=PID).update(blocked=True)
    page = client.get(new_url(made))
    assert_german(page, status=403)
    assert "Sie können in dieser Studie keine Kämpfe mehr übernehmen." in page.content.decode()
    assert not Battle.objects.filter(voter_ref=PID, source="live").exists()


def test_a_models_failure_is_german_on_the_page_and_in_its_stream(client, launched):
    made, campaign = launched
    arrive(client, campaign)
    battle = next_battle(client, made)
    failed = BattleAnswer.objects.get(turn__battle=battle, side="a")
    failed.status, failed.error = BattleAnswer.Status.FAILED, UNUSABLE
    failed.save(update_fields=["status", "error"])

    page = client.get(battle.get_absolute_url())
    assert_german(page)
    html = page.content.decode()
    assert "Dieses Modell hat keine brauchbare Antwort gegeben." in html
    assert "Über diesen Kampf kann nicht abgestimmt werden." in html

    stream = client.get(reverse("arenas:stream", args=[made.slug, battle.public_id, 1, "a"]))
    events = b"".join(stream.streaming_content).decode()
    end = next(line for line in events.splitlines() if line.startswith("data:") and "error" in line)
    assert json.loads(end[5:])["error"] == "Dieses Modell hat keine brauchbare Antwort gegeben."
    # Stored as the model's failure was, in English: the researchers' exports read it.
    failed.refresh_from_db()
    assert failed.error == UNUSABLE


def test_a_stored_failure_is_shown_in_the_active_language():
    waited = BUSY_WAIT % {"seconds": "2.5"}
    with translation.override("es"):
        assert shown_error(UNUSABLE) == "Este modelo no ha dado una respuesta útil."
        assert shown_error(waited) == "Este modelo está ocupado ahora mismo (pide esperar 2.5 s)."
        assert shown_error("Something else.") == "Something else."
    with translation.override("en"):
        assert shown_error(waited) == "This model is busy right now (it asks to wait 2.5 s)."


def test_the_arenas_own_visitors_keep_the_english_page(client, launched):
    made, campaign = launched
    arrive(client, campaign)
    visitor = Client()
    visitor.force_login(factories.user("visitor"))
    page = visitor.get(new_url(made), headers={"accept-language": "de"})
    assert page.status_code == 200
    html = page.content.decode()
    assert 'lang="en"' in html and "Content-Language" not in page.headers
    assert "Two anonymous models answer side by side." in html
    assert english_left(page)  # the English page, and the site's menu
    assert 'class="worker"' not in html
    # The German voter's page, meanwhile, is a worker page with their campaign's bar.
    theirs = client.get(new_url(made), follow=True)
    assert theirs.headers["Content-Language"] == "de"
    assert "Wellen-Arena: Chatbot-Kämpfe" in theirs.content.decode()


def test_a_refused_prompt_without_javascript_comes_back_to_the_german_battle_page(client, launched):
    made, campaign = launched
    arrive(client, campaign)
    page = client.get(new_url(made))
    if page.status_code == 302:  # the gold battle comes first: vote it
        gold = battle_of(page["Location"])
        client.post(reverse("arenas:vote", args=[made.slug, gold.public_id]), {"vote": "tie"})
    refused = client.post(
        reverse("arenas:battle-start", args=[made.slug]), {"prompt": "  "}, follow=True
    )
    assert refused.redirect_chain[-1][0] == new_url(made)
    assert_german(refused)
    assert "Schreiben Sie zuerst eine Nachricht." in refused.content.decode()
    assert not Battle.objects.filter(arena=made, source="live").exists()


def test_a_battle_that_is_not_theirs_is_a_german_404(client, launched):
    made, campaign = launched
    arrive(client, campaign)
    page = client.get(reverse("arenas:battle", args=[made.slug, uuid.uuid4()]))
    assert page.status_code == 404
    assert 'lang="de"' in page.content.decode()
    assert english_left(page) == set()
    assert "Öffnen Sie die Aufgabe erneut über den Link" in page.content.decode()


def test_a_stopped_answers_failure_is_german_in_the_stop_reply(client, launched):
    made, campaign = launched
    arrive(client, campaign)
    battle = next_battle(client, made)
    BattleAnswer.objects.filter(turn__battle=battle, side="b").update(
        status=BattleAnswer.Status.FAILED, error=UNUSABLE
    )
    url = reverse("arenas:stop", args=[made.slug, battle.public_id, 1, "b"])
    reply = json_post(client, url, {})
    assert reply.status_code == 200
    assert reply.json()["error"] == "Dieses Modell hat keine brauchbare Antwort gegeben."
    assert BattleAnswer.objects.get(turn__battle=battle, side="b").error == UNUSABLE


def test_the_minutes_limit_is_said_in_german(client, launched, settings):
    made, campaign = launched
    arrive(client, campaign)
    battle = next_battle(client, made)
    if battle.source == "gold":  # a live one: its start is an action of the minute
        client.post(reverse("arenas:vote", args=[made.slug, battle.public_id]), {"vote": "tie"})
        battle = next_battle(client, made, 2)
    settings.EVALHUB_ARENA_ACTIONS_PER_MINUTE = 1  # the start was the one
    url = reverse("arenas:vote", args=[made.slug, battle.public_id])
    refused = json_post(client, url, {"vote": "tie"})
    assert refused.status_code == 429 and refused["Retry-After"] == "60"
    message = refused.json()["errors"][0]["message"]
    assert message.startswith("Sie sind zu schnell: höchstens 1 Aktion pro Minute")
    assert german_words_only(message)
    assert Battle.objects.get(pk=battle.pk).vote == ""
