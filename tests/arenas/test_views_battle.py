"""The battle pages with fake streaming models on 127.0.0.1: who may vote, a battle is its
voter's alone, names hidden until the vote, the non-JavaScript form (whole answers), the
JSON and event-stream twins the page's script uses, under WSGI and under ASGI."""

import asyncio
import json

import pytest
from django.test import AsyncClient
from django.urls import reverse

from arenas.models import Arena, Battle, BattleAnswer
from tests import factories
from tests.arenas.builders import arena, bot_system
from tests.endpoints import sse_fake

pytestmark = pytest.mark.django_db(transaction=True)
JSON = {"HTTP_ACCEPT": "application/json"}


@pytest.fixture
def models():
    """Two fake models: "Alpha" and "Beta" (names the voter must not see before voting)."""
    with sse_fake.StreamingPool() as pool:
        one = pool.start(sse_fake.words("Waves ", "are ", "wind."))
        two = pool.start(sse_fake.words("The ", "moon ", "pulls."))
        owner = factories.user()
        systems = [
            bot_system(owner, url=one.base_url, slug="alpha-bot", name="Alpha"),
            bot_system(owner, url=two.base_url, slug="beta-bot", name="Beta"),
        ]
        yield owner, systems, (one, two)


def events(response) -> list[tuple[str, dict]]:
    body = b"".join(response.streaming_content).decode()
    found = []
    for block in body.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if not line.startswith(":"))
        if lines:
            found.append((lines["event"], json.loads(lines["data"])))
    return found


def start(client, made, prompt="Why are there waves?", **headers):
    return client.post(
        reverse("arenas:battle-start", args=[made.slug]), {"prompt": prompt}, **headers
    )


def test_without_javascript_a_post_answers_both_sides_whole(client, models):
    owner, systems, _ = models
    made = arena(owner, systems=systems)
    client.force_login(owner)
    response = start(client, made)
    battle = Battle.objects.get()
    assert response.status_code == 302 and response["Location"] == battle.get_absolute_url()
    assert set(BattleAnswer.objects.values_list("status", flat=True)) == {"done"}
    page = client.get(battle.get_absolute_url()).content.decode()
    assert "Waves are wind." in page and "The moon pulls." in page
    assert "Alpha" not in page and "Beta" not in page  # nobody is named before the vote
    client.post(
        reverse("arenas:turn", args=[made.slug, battle.public_id]), {"prompt": "And tides?"}
    )
    assert BattleAnswer.objects.filter(turn__number=2, status="done").count() == 2
    client.post(reverse("arenas:vote", args=[made.slug, battle.public_id]), {"vote": "b_better"})
    battle.refresh_from_db()
    assert battle.vote == "b_better" and battle.turns == 2
    revealed = client.get(battle.get_absolute_url()).content.decode()
    assert "Alpha" in revealed and "Beta" in revealed and "You voted: B is better." in revealed


def test_with_javascript_the_battle_comes_back_as_json_and_streams_per_side(client, models):
    owner, systems, _ = models
    made = arena(owner, systems=systems)
    client.force_login(owner)
    view = start(client, made, **JSON).json()
    assert view["turns"][0]["a"]["status"] == "pending" and not view["can_vote"]
    assert "reveal" not in view and "Alpha" not in json.dumps(view)
    streamed = {side: events(client.get(view["turns"][0][side]["stream"])) for side in "ab"}
    texts = {side: streamed[side][-1][1]["text"] for side in "ab"}
    assert set(texts.values()) == {"Waves are wind.", "The moon pulls."}
    for side in "ab":
        names = [name for name, _ in streamed[side]]
        assert names == ["piece", "piece", "piece", "end"]
        assert "".join(data["text"] for name, data in streamed[side][:-1]) == texts[side]
    battle = Battle.objects.get()
    view = client.get(battle.get_absolute_url(), **JSON).json()
    assert view["can_vote"] and view["can_continue"]
    voted = client.post(view["vote_url"], {"vote": "tie"}, **JSON).json()
    battle.refresh_from_db()
    assert voted["reveal"] == {"a": battle.system_a.name, "b": battle.system_b.name}
    assert battle.vote == "tie"


def test_the_stream_is_an_event_stream_that_proxies_do_not_buffer(client, models):
    owner, systems, _ = models
    made = arena(owner, systems=systems)
    client.force_login(owner)
    view = start(client, made, **JSON).json()
    response = client.get(view["turns"][0]["a"]["stream"])
    assert response["Content-Type"] == "text/event-stream"
    assert response["Cache-Control"] == "no-cache" and response["X-Accel-Buffering"] == "no"
    events(response)


def test_under_asgi_the_stream_is_relayed_by_the_event_loop(models):
    owner, systems, (one, _) = models
    made = arena(owner, systems=systems)

    async def battle():
        client = AsyncClient()
        await client.aforce_login(owner)
        started = await client.post(
            reverse("arenas:battle-start", args=[made.slug]),
            {"prompt": "Why are there waves?"},
            headers={"Accept": "application/json"},
        )
        view = json.loads(started.content)
        response = await client.get(view["turns"][0]["a"]["stream"])
        assert response.is_async
        chunks = [chunk async for chunk in response.streaming_content]
        return b"".join(chunks).decode()

    body = asyncio.run(battle())
    assert body.count("event: piece") == 3 and '"status": "done"' in body


def test_the_stop_button_answers_the_stored_answer(client, models):
    owner, systems, _ = models
    made = arena(owner, systems=systems)
    client.force_login(owner)
    view = start(client, made, **JSON).json()
    stopped = client.post(view["turns"][0]["b"]["stop"], **JSON)
    assert stopped.status_code == 200
    assert stopped.json() == {"status": "stopped", "text": "", "error": ""}
    assert BattleAnswer.objects.get(side="b").status == "stopped"


def test_a_refused_prompt_is_a_json_error_and_stores_nothing(client, models):
    owner, systems, _ = models
    made = arena(owner, systems=systems, block_list=["waves"])
    client.force_login(owner)
    response = start(client, made, **JSON)
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "prompt"
    assert not Battle.objects.exists()


def test_a_battle_is_its_voters_alone(client, models):
    owner, systems, _ = models
    made = arena(owner, systems=systems)
    client.force_login(owner)
    view = start(client, made, **JSON).json()
    battle = Battle.objects.get()
    client.force_login(factories.user())
    urls = [battle.get_absolute_url(), view["turns"][0]["a"]["stream"]]
    assert [client.get(url).status_code for url in urls] == [404, 404]
    assert client.post(view["vote_url"], {"vote": "tie"}).status_code == 404
    assert client.post(view["turn_url"], {"prompt": "x"}).status_code == 404
    assert client.post(view["turns"][0]["a"]["stop"]).status_code == 404
    assert BattleAnswer.objects.filter(status="pending").count() == 2


def test_visitors_log_in_to_vote_where_signed_in_users_vote(client, models):
    owner, systems, _ = models
    made = arena(owner, systems=systems)
    response = client.get(reverse("arenas:battle-new", args=[made.slug]))
    assert response.status_code == 302 and "/login/" in response["Location"]
    assert start(client, made).status_code == 302 and not Battle.objects.exists()


def test_a_private_arena_is_404_to_others_and_its_owner_may_battle(client, models):
    owner, systems, _ = models
    made = arena(owner, systems=systems, visibility=Arena.Visibility.PRIVATE)
    client.force_login(factories.user())
    assert client.get(reverse("arenas:battle-new", args=[made.slug])).status_code == 404
    client.force_login(owner)
    assert client.get(reverse("arenas:battle-new", args=[made.slug])).status_code == 200


def test_an_invitation_link_lets_a_visitor_vote_in_a_private_arena(client, models):
    owner, systems, _ = models
    made = arena(
        owner, systems=systems, visibility=Arena.Visibility.PRIVATE, voters=Arena.Voters.LINK
    )
    assert client.get(reverse("arenas:battle-new", args=[made.slug])).status_code == 404
    wrong = client.get(reverse("arenas:join", args=[made.slug, "not-the-token"]))
    assert wrong.status_code == 404
    joined = client.get(made.invitation_url())
    assert joined["Location"] == reverse("arenas:battle-new", args=[made.slug])
    assert client.get(joined["Location"]).status_code == 200
    start(client, made)
    battle = Battle.objects.get()
    assert battle.voter is None and battle.voter_platform == "link"
    assert battle.voter_ref.startswith("visitor:")
    assert client.get(battle.get_absolute_url()).status_code == 200
    # The leaderboard and the arena's page stay private.
    assert client.get(made.get_absolute_url()).status_code == 404


def test_a_link_arena_refuses_signed_in_users_without_the_link(client, models):
    owner, systems, _ = models
    made = arena(owner, systems=systems, voters=Arena.Voters.LINK)
    client.force_login(factories.user())
    assert client.get(reverse("arenas:battle-new", args=[made.slug])).status_code == 403


def test_regenerate_answers_both_sides_again(client, models):
    owner, systems, (one, two) = models
    made = arena(owner, systems=systems)
    client.force_login(owner)
    start(client, made)
    battle = Battle.objects.get()
    url = reverse("arenas:regenerate", args=[made.slug, battle.public_id])
    response = client.post(url)
    assert response.status_code == 302
    assert len(one.requests) == len(two.requests) == 2
    assert BattleAnswer.objects.filter(status="done").count() == 2
    turn = battle.battle_turns.get()
    assert len(turn.regenerated) == 1
    view = client.post(url, **JSON).json()
    assert {view["turns"][0][side]["status"] for side in "ab"} == {"pending"}
    assert not view["can_regenerate"] and not view["can_vote"]
