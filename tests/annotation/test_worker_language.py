"""The worker pages in the campaign's language: a German campaign shows no English string on
any page a worker sees (every task kind, training, completion, refusals, errors); Arabic
lays the page out right to left; dates and numbers follow the language; a campaign that
follows the browser speaks the browser's language when the site has it.

"No English" is checked against the catalog itself: a word of the English source strings
(every msgid) that no German translation uses must not appear in the page's visible text,
its titles and labels, or the words its scripts are given (data-text-*, data-left, data-up).
The campaign's own texts (title, instructions, conversations) are German here, as a German
campaign's would be: they are shown as written."""

import random
import re
from datetime import timedelta
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from annotation.items import add_items
from annotation.kinds import get_kind
from annotation.kinds.abc_eval import with_gold
from annotation.kinds.base import ItemSpec
from annotation.models import Assignment, Campaign, Judgment
from tests.annotation.builders import campaign as make_campaign
from tests.annotation.chat_setup import bot_system, chat_campaign
from tests.annotation.kinds.test_abc_eval import conversation, loaded
from tests.endpoints.openai_fake import FakePool, completion

pytestmark = pytest.mark.django_db

GERMAN_TALK = [
    "Hallo! Ich bin gerade von einer Woche Wandern in den Alpen zurück.",
    "Willkommen zurück! In welchem Teil der Alpen warst du unterwegs?",
    "Rund um Chamonix. Meine Knie tun nach den vielen Abstiegen weh.",
    "Lange Abstiege sind hart für die Knie. Ich habe letzten Sommer den Mont Blanc bestiegen.",
    "Wow, war der Aufstieg sehr schwer?",
    "Ich war noch nie in den Bergen, daher weiß ich das nicht.",
]
INSTRUCTIONS = "Lesen Sie jedes Gespräch aufmerksam und antworten Sie ehrlich."

# Attributes whose words a person reads or hears (the scripts' words included).
READ_ATTRIBUTES = ("title", "placeholder", "aria-label", "alt", "data-left", "data-up")


def _catalog_words(path: Path, field: str) -> set[str]:
    text = path.read_text(encoding="utf-8")
    words = set()
    pattern = rf'^{field}(?:\[\d\])? "(.*)"\n((?:".*"\n)*)'
    for first, rest in re.findall(pattern, text, flags=re.M):
        whole = first + "".join(re.findall(r'^"(.*)"$', rest, flags=re.M))
        # Placeholders (%(name)s, {time}) and markup are not words of the language.
        whole = re.sub(r"%\(\w+\)[sdr]|\{\w+\}|<[^>]*>", " ", whole)
        words |= {w.lower() for w in re.findall(r"[^\W\d_]+", whole)}
    return words


def _english_only_words() -> set[str]:
    po = Path(settings.BASE_DIR) / "locale" / "de" / "LC_MESSAGES" / "django.po"
    english = _catalog_words(po, "msgid") | _catalog_words(po, "msgid_plural")
    return english - _catalog_words(po, "msgstr")


ENGLISH_ONLY = _english_only_words()


class _ReadText(HTMLParser):
    """The text a person reads on the page: text outside scripts and styles, the read
    attributes, and the words given to the scripts."""

    def __init__(self):
        super().__init__()
        self.parts, self.skipping = [], 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self.skipping += 1
        for name, value in attrs:
            if value and (name in READ_ATTRIBUTES or name.startswith("data-text-")):
                self.parts.append(value)

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self.skipping -= 1

    def handle_data(self, data):
        if not self.skipping:
            self.parts.append(data)


def english_left(response) -> set[str]:
    """The words of the page that only the English strings use."""
    reader = _ReadText()
    reader.feed(response.content.decode())
    # The scripts' placeholders ({time}) are filled in by the scripts, not read.
    text = re.sub(r"\{\w+\}", " ", " ".join(reader.parts))
    words = {w.lower() for w in re.findall(r"[^\W\d_]+", text)}
    return words & ENGLISH_ONLY


def assert_german(response, status=200):
    assert response.status_code == status
    assert 'lang="de"' in response.content.decode()
    assert english_left(response) == set()


def german(kind, **fields) -> Campaign:
    fields.setdefault("title", "Gespräche bewerten")
    return make_campaign(kind, language="de", instructions=INSTRUCTIONS, **fields)


def talks(c, n):
    return loaded([conversation(f"{c.slug}-{i}", GERMAN_TALK) for i in range(n)])


def start(client, c, worker="w1"):
    return client.get(f"{c.start_url()}?worker={worker}")


def assignment_of(c, worker="w1") -> Assignment:
    return Assignment.objects.get(campaign=c, worker__external_id=f"link:{worker}")


def item_page(client, c, worker="w1"):
    start(client, c, worker)
    return client.get(assignment_of(c, worker).get_absolute_url())


def first_item(c, worker="w1"):
    return assignment_of(c, worker).batch.items.order_by("order_in_batch").first()


def submit(client, c, data, worker="w1"):
    assignment = assignment_of(c, worker)
    url = reverse("annotation:submit-item", args=[assignment.public_id, first_item(c, worker).pk])
    return client.post(url, data)


def test_the_catalog_has_english_only_words_to_look_for():
    # A guard on the guard: the check below would pass on anything if this set were empty.
    assert {"conversation", "response", "training", "submit"} <= ENGLISH_ONLY


def test_the_check_finds_the_english_of_an_english_campaign(client):
    # A guard on the guard: the same page in English fails the check.
    c = ab_german()
    Campaign.objects.filter(pk=c.pk).update(language="en")
    assert {"response", "which", "instructions"} <= english_left(item_page(client, c))


def ab_german(**fields):
    c = german("ab", batch_size=1, **fields)
    spec = ItemSpec(
        content={
            "context": ["Was empfiehlst du für ein verregnetes Wochenende?"],
            "left": "Ein gutes Buch und ein Tee.",
            "right": "Ein Museumsbesuch in der Stadt.",
            "left_is": "a",
            "meta": {"prompt": "p1", "system_a": "a", "system_b": "b"},
        }
    )
    add_items(c, [spec])
    return c


def test_an_ab_page_its_errors_and_the_completion_page_are_german(client):
    c = ab_german(time_limit_minutes=30)
    assert_german(item_page(client, c))
    assert_german(submit(client, c, {}), status=400)
    assert submit(client, c, {"choice": "left"}).status_code == 302
    assert_german(client.get(reverse("annotation:done", args=[assignment_of(c).public_id])))


def test_the_identify_page_and_refusals_are_german(client):
    c = ab_german()
    assert_german(client.get(c.start_url()))
    Campaign.objects.filter(pk=c.pk).update(allow_worker_param=False)
    assert_german(start(client, c), status=403)
    Campaign.objects.filter(pk=c.pk).update(allow_worker_param=True, status="paused")
    assert_german(start(client, c))


def test_an_expired_batch_and_a_stranger_s_404_are_german(client):
    c = ab_german(time_limit_minutes=30)
    start(client, c)
    assignment = assignment_of(c)
    Assignment.objects.filter(pk=assignment.pk).update(
        expires_at=timezone.now() - timedelta(minutes=1)
    )
    assert_german(client.get(assignment.get_absolute_url()))
    client.logout()  # a new session: the assignment is somebody else's
    assert_german(client.get(assignment.get_absolute_url()), status=404)


def test_an_mturk_preview_is_german(client):
    c = ab_german(provider="mturk")
    response = client.get(f"{c.start_url()}?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE")
    assert_german(response)


@pytest.mark.parametrize("level", ["dialogue", "turn"])
def test_likert_pages_are_german(client, level):
    c = german("likert", task_config={"level": level}, batch_size=1)
    kind = get_kind("likert")
    add_items(c, kind.build_from_conversations(talks(c, 1), c.task_config, random.Random(0)))
    assert_german(item_page(client, c))
    assert_german(submit(client, c, {}), status=400)


def test_spot_the_bot_pages_are_german(client):
    c = german("spot_the_bot", batch_size=1)
    content = {
        "speakers": ["Speaker 1", "Speaker 2"],
        "turns": [{"speaker": i % 2, "text": text} for i, text in enumerate(GERMAN_TALK)],
        "seed": [{"speaker": 0, "text": "Worüber möchtest du reden?"}],
        "meta": {"conversation": "c-1", "speakers": ["human", "bot"], "exchanges": 3},
    }
    add_items(c, [ItemSpec(content=content)])
    page = item_page(client, c)
    assert_german(page)
    assert "Person 1" in page.content.decode()  # the default speaker names, translated
    assert_german(submit(client, c, {}), status=400)


def test_comparative_pages_are_german(client):
    c = german("comparative", batch_size=1)
    turns = [
        {"speaker": i % 2, "name": ("Human", "Chatbot")[i % 2], "text": text}
        for i, text in enumerate(GERMAN_TALK)
    ]
    content = {"dialogues": {"a": turns, "b": turns[:4]}, "left_is": "b", "meta": {}}
    add_items(c, [ItemSpec(content=content)])
    page = item_page(client, c)
    assert_german(page)
    assert "Mensch" in page.content.decode()
    assert_german(submit(client, c, {}), status=400)


ANSWERS = ["Ein gutes Buch und ein Tee.", "Ein Museumsbesuch in der Stadt.", "Ein Spaziergang."]


@pytest.mark.parametrize("allow_ties", [False, True])
def test_ranking_pages_are_german(client, allow_ties):
    c = german("ranking", task_config={"allow_ties": allow_ties}, batch_size=1)
    content = {
        "context": ["Was empfiehlst du für ein verregnetes Wochenende?"],
        "responses": ANSWERS,
        "meta": {"prompt": "p1", "systems": [["a"], ["b"], ["c"]]},
    }
    add_items(c, [ItemSpec(content=content)])
    page = item_page(client, c)
    assert_german(page)
    ties = "Gleich gute Antworten dürfen denselben Rang haben."
    own = "Geben Sie jeder Antwort einen eigenen Rang."
    assert (ties if allow_ties else own) in page.content.decode()
    missing = submit(client, c, {"rank_1": "1"})
    assert_german(missing, status=400)
    assert "Geben Sie Antwort 2 einen Rang." in missing.content.decode()
    stale = submit(client, c, {"rank_1": "1", "rank_2": "2", "rank_3": "3", "rank_4": "1"})
    # The message names the unknown field as sent (rank_4), so only its sentence is checked.
    assert stale.status_code == 400
    assert "Diese Antwort gibt es auf dieser Seite nicht: rank_4." in stale.content.decode()
    assert not Judgment.objects.filter(item__campaign=c).exists()


def test_a_shared_rank_refused_is_german(client):
    c = german("ranking", task_config={"allow_ties": False}, batch_size=1)
    content = {"context": [], "responses": ANSWERS, "meta": {"prompt": "p1", "systems": []}}
    add_items(c, [ItemSpec(content=content)])
    item_page(client, c)
    shared = submit(client, c, {"rank_1": "1", "rank_2": "1", "rank_3": "2"})
    assert_german(shared, status=400)
    assert "Die Antworten 1 und 2 haben denselben Rang 1." in shared.content.decode()
    assert not Judgment.objects.filter(item__campaign=c).exists()


def test_conversation_ranking_pages_are_german(client):
    c = german("conversation_ranking", task_config={"allow_ties": False}, batch_size=1)
    turns = [
        {"speaker": i % 2, "name": ("Human", "Chatbot")[i % 2], "text": text}
        for i, text in enumerate(GERMAN_TALK)
    ]
    content = {
        "conversations": [turns, turns[:4], turns[:2]],
        "meta": {"group": "p1", "conversations": ["x", "y", "z"], "systems": [["a"], ["b"], ["c"]]},
    }
    add_items(c, [ItemSpec(content=content)])
    page = item_page(client, c)
    assert_german(page)
    assert "Gespräch 3" in page.content.decode() and "Mensch" in page.content.decode()
    shared = submit(client, c, {"rank_1": "2", "rank_2": "2", "rank_3": "9"})
    assert_german(shared, status=400)
    body = shared.content.decode()
    assert "„9“ ist kein Rang für Gespräch 3: Die Ränge gehen von 1 bis 3." in body
    assert not Judgment.objects.filter(item__campaign=c).exists()


def abc_training_campaign():
    c = german(
        "abc_eval",
        task_config={"behaviour_task": "consistency", "training_conversations": 1},
        batch_size=1,
        requires_training=True,
    )
    kind = get_kind("abc_eval")
    specs = kind.build_from_conversations(talks(c, 2), c.task_config, random.Random(0))
    gold = {
        "self contradiction": [0, 0, 1],
        "partner contradiction": [0, 0, 0],
        "redundant": [0, 0, 0],
    }
    explanation = {5: "Der Bot sagte, er habe den Mont Blanc bestiegen."}
    add_items(c, [specs[0], with_gold(specs[1], gold, explanation)])
    return c


def test_abc_eval_training_from_start_to_failure_is_german(client):
    c = abc_training_campaign()
    assert start(client, c).status_code == 302
    training = reverse("annotation:training", args=[c.slug])
    assert_german(client.get(training))
    client.post(reverse("annotation:training-begin", args=[c.slug]))
    item = client.get(training, follow=True)
    assert_german(item)
    item_url = item.redirect_chain[-1][0]
    assert_german(client.post(item_url, {}), status=400)
    feedback = client.post(item_url, {"reviewed": "1", "flag_redundant_1": "1"}, follow=True)
    assert_german(feedback)
    assert "Bot-Beitrag" in feedback.content.decode()
    result = client.get(training)
    assert_german(result)
    assert "Diesmal haben Sie sich nicht qualifiziert" in result.content.decode()


def test_abc_eval_qualified_and_task_pages_are_german(client):
    c = abc_training_campaign()
    start(client, c)
    client.post(reverse("annotation:training-begin", args=[c.slug]))
    item_url = client.get(reverse("annotation:training", args=[c.slug]))["Location"]
    client.post(item_url, {"reviewed": "1", "flag_self_contradiction_5": "1"})
    assert_german(client.get(reverse("annotation:training", args=[c.slug])))
    assert_german(item_page(client, c))


@pytest.fixture
def fakes():
    with FakePool() as pool:
        yield pool


def test_the_chat_pages_are_german(client, fakes):
    server = fakes.start(lambda payload: completion("Mir geht es gut, danke der Nachfrage."))
    c = chat_campaign(
        [bot_system(server)], language="de", title="Plaudern", instructions=INSTRUCTIONS
    )
    page = item_page(client, c)
    assert_german(page)
    assignment, item = assignment_of(c), first_item(c)
    for position in (0, 2):
        client.post(
            reverse("annotation:chat-send", args=[assignment.public_id, item.pk]),
            {"text": "Wie geht es dir heute?", "position": position},
        )
    assert_german(client.get(assignment.get_absolute_url()))
    client.post(reverse("annotation:chat-end", args=[assignment.public_id, item.pk]))
    assert_german(client.get(assignment.get_absolute_url()))
    assert_german(submit(client, c, {}), status=400)


def test_arabic_pages_are_laid_out_right_to_left(client):
    c = ab_german()
    Campaign.objects.filter(pk=c.pk).update(language="ar")
    page = item_page(client, c).content.decode()
    assert '<html lang="ar" dir="rtl">' in page


def test_an_english_campaign_is_left_to_right_and_english(client):
    c = make_campaign("ab", batch_size=1)
    add_items(c, [ItemSpec(content={**ab_content(), "left_is": "a"})])
    page = item_page(client, c).content.decode()
    assert '<html lang="en" dir="ltr">' in page and "Which response is the better" in page


def ab_content():
    return {
        "context": ["Hi"],
        "left": "One",
        "right": "Two",
        "meta": {"prompt": "p", "system_a": "a", "system_b": "b"},
    }


def test_dates_and_numbers_follow_the_language(client):
    c = abc_training_campaign()
    Campaign.objects.filter(pk=c.pk).update(
        task_config={
            "behaviour_task": "consistency",
            "training_conversations": 1,
            "screening_min_recall": 0.625,
        }
    )
    start(client, c)
    client.post(reverse("annotation:training-begin", args=[c.slug]))
    item_url = client.get(reverse("annotation:training", args=[c.slug]))["Location"]
    client.post(item_url, {"reviewed": "1"})  # misses the one self contradiction
    result = client.get(reverse("annotation:training", args=[c.slug])).content.decode()
    assert "mindestens 62,5 % nötig" in result  # a German decimal comma and percent sign

    ab = ab_german()
    start(client, ab, "w9")
    assignment = assignment_of(ab, "w9")
    submit(client, ab, {"choice": "left"}, worker="w9")
    done = client.get(reverse("annotation:done", args=[assignment.public_id])).content.decode()
    submitted = Assignment.objects.get(pk=assignment.pk).submitted_at
    months = ["Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August"]
    months += ["September", "Oktober", "November", "Dezember"]
    german_date = f"{submitted.day}. {months[submitted.month - 1]} {submitted.year} "
    assert f"Abgegeben am {german_date}{submitted:%H:%M} (UTC)." in done


def test_a_campaign_that_follows_the_browser_speaks_its_language(client):
    c = ab_german(follow_browser=True)
    response = start(client, c, "w3")
    page = client.get(assignment_of(c, "w3").get_absolute_url(), HTTP_ACCEPT_LANGUAGE="es,de;q=0.5")
    assert response.status_code == 302
    assert '<html lang="es" dir="ltr">' in page.content.decode()
    assert "¿Qué respuesta es el mejor turno siguiente?" in page.content.decode()
    assert page["Content-Language"] == "es" and "Accept-Language" in page["Vary"]


def test_a_browser_language_the_site_lacks_falls_back_to_the_campaign_s(client):
    c = ab_german(follow_browser=True)
    start(client, c, "w4")
    page = client.get(assignment_of(c, "w4").get_absolute_url(), HTTP_ACCEPT_LANGUAGE="fr")
    assert '<html lang="de" dir="ltr">' in page.content.decode()


def test_a_campaign_that_does_not_follow_the_browser_ignores_it(client):
    c = ab_german()
    start(client, c, "w5")
    page = client.get(assignment_of(c, "w5").get_absolute_url(), HTTP_ACCEPT_LANGUAGE="es")
    assert '<html lang="de" dir="ltr">' in page.content.decode()
    assert page["Content-Language"] == "de"


def test_the_worker_s_language_does_not_leak_into_the_next_request(client):
    c = ab_german()
    item_page(client, c)
    home = client.get(reverse("home"))
    assert '<html lang="en">' in home.content.decode()
