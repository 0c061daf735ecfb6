"""Conversation import: every bad line is refused with its number, nothing is written, and
importing the same file twice adds nothing."""

import json

import pytest

from evalhub import limits
from evalhub.importers.conversations import parse_conversations
from evalhub.importers.problems import InvalidUpload
from evalhub.models import Conversation, Speaker, System, Turn
from evalhub.services import import_conversations
from tests import factories

LIMIT = 1024 * 1024


def conversation(n: int = 1, **fields) -> dict:
    row = {
        "id": f"talk-{n}",
        "domain": "chitchat",
        "speakers": ["parrot-bot", "human"],
        "turns": [
            {"speaker": 0, "text": f"hello, this is talk {n}"},
            {"speaker": 1, "text": "hi! how are you?"},
            {"speaker": 0, "text": "fine, thanks."},
        ],
    }
    row.update(fields)
    return {key: value for key, value in row.items() if value is not None}


def jsonl(*rows) -> bytes:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows).encode()


def problems_of(data: bytes, filename="c.jsonl", limit=LIMIT, gold_file=False) -> list[str]:
    with pytest.raises(InvalidUpload) as raised:
        parse_conversations(data, filename, limit, gold_file=gold_file)
    return [str(p) for p in raised.value.problems]


def test_a_valid_file_is_parsed_in_order():
    parsed = parse_conversations(
        jsonl(conversation(1), conversation(2, source="self-play", metadata={"seed": 3})),
        "c.jsonl",
        LIMIT,
    )
    assert [c.external_id for c in parsed] == ["talk-1", "talk-2"]
    first, second = parsed
    assert first.line == 1 and first.speakers == ("parrot-bot", "human")
    assert first.turns[1] == (1, "hi! how are you?")
    assert (second.source, second.metadata) == ("self-play", {"seed": 3})


@pytest.mark.parametrize(
    "row, expected",
    [
        ("{not json", "line 2: not valid JSON"),
        ("[1, 2]", "line 2: each line must be a JSON object"),
        (conversation(2, turns=None), "line 2: missing 'turns'."),
        (conversation(2, speakers=["human"]), "line 2: 'speakers' must be a list of two or more"),
        (
            conversation(2, turns=[{"speaker": 2, "text": "who am i"}]),
            "line 2: turn 1: speaker 2 is out of range (0 to 1).",
        ),
        (
            conversation(2, turns=[{"speaker": "0", "text": "hi"}]),
            "line 2: turn 1: 'speaker' must be a speaker index.",
        ),
        (
            conversation(2, turns=[{"speaker": 1, "text": "  "}]),
            "line 2: turn 1: empty text.",
        ),
        (conversation(2, turns=[]), "line 2: 'turns' must be a list of one or more turns."),
        (conversation(2, id="talk 2"), "line 2: the id 'talk 2' contains whitespace."),
        (conversation(2, id=""), "line 2: 'id' must be a non-empty string."),
        (
            conversation(2, speakers=["parrot bot!", "human"]),
            "line 2: speaker 0: 'parrot bot!' is neither \"human\" nor a system slug",
        ),
        (conversation(2, source="dreamt"), "line 2: unknown source 'dreamt'"),
        (conversation(2, metadata=[1]), "line 2: 'metadata' must be an object"),
        (conversation(2, domain=7), "line 2: 'domain' must be a string"),
        (conversation(2, extra=1), "line 2: unknown key 'extra'"),
        (
            conversation(2, gold={"labels": ["bot", "human"]}),
            "line 2: 'gold' belongs in the file of gold and training items.",
        ),
        (conversation(1), "line 2: duplicate id 'talk-1' (first on line 1)."),
        (
            conversation(2, turns=[{"speaker": 1, "text": "x" * (limits.TEXT_CHARS + 1)}]),
            f"line 2: turn 1: its text has {limits.TEXT_CHARS + 1:,} characters; at most "
            f"{limits.TEXT_CHARS:,} are allowed.",
        ),
        (
            conversation(
                2,
                speakers=["human", "human"],
                seed=[{"speaker": 0, "text": "x" * (limits.TEXT_CHARS + 1)}],
            ),
            "line 2: seed turn 1: its text has",
        ),
    ],
)
def test_each_problem_is_named_with_its_line(row, expected):
    found = problems_of(jsonl(conversation(1), row, conversation(3)))
    assert len(found) == 1
    assert found[0].startswith(expected)


def test_every_problem_of_the_file_is_listed():
    found = problems_of(
        jsonl(conversation(1, id="a b"), conversation(2), conversation(3, speakers=["human"]))
    )
    assert [p.split(":")[0] for p in found] == ["line 1", "line 3"]


def test_a_system_may_say_nothing_but_a_person_may_not():
    bot_silent = conversation(1, turns=[{"speaker": 0, "text": ""}, {"speaker": 1, "text": "?"}])
    [parsed] = parse_conversations(jsonl(bot_silent), "c.jsonl", LIMIT)
    assert parsed.turns[0] == (0, "")
    person_silent = conversation(1, turns=[{"speaker": 1, "text": ""}])
    assert problems_of(jsonl(person_silent)) == ["line 1: turn 1: empty text."]


def test_whole_file_problems():
    assert problems_of(b"x" * 11, limit=10) == ["The file is 11 bytes; the limit is 10 bytes."]
    assert problems_of(jsonl(conversation(1)), filename="c.csv") == [
        "Upload conversations as a .jsonl file."
    ]
    assert problems_of(b"\n\n") == ["The file holds no conversations."]
    bad_utf8 = jsonl(conversation(1)) + b'{"id": "caf\xe9"}\n'
    assert problems_of(bad_utf8) == ["line 2: the file is not UTF-8 (byte 0xe9 cannot be decoded)."]


def test_a_gold_file_needs_a_role_and_an_answer():
    gold = conversation(1, role="gold", gold={"labels": ["bot", "human"]})
    [parsed] = parse_conversations(jsonl(gold), "g.jsonl", LIMIT, gold_file=True)
    assert (parsed.role, parsed.gold) == ("gold", {"labels": ["bot", "human"]})
    assert problems_of(
        jsonl(conversation(1), conversation(2, role="test", gold={})), gold_file=True
    ) == [
        "line 1: missing 'role', 'gold'.",
        "line 2: 'role' must be \"gold\" or \"training\", not 'test'.",
        "line 2: 'gold' must be an object holding the answer.",
    ]


@pytest.mark.django_db
def test_import_stores_conversations_speakers_turns_and_new_systems():
    owner = factories.user("importer")
    existing = factories.system(slug="known-bot")
    data = jsonl(
        conversation(1),
        conversation(2, speakers=["known-bot", "parrot-bot"]),
        conversation(3, speakers=["human", "human"], domain="social"),
    )
    result = import_conversations(data=data, filename="c.jsonl", user=owner)
    assert (result.created, result.unchanged, result.systems_created) == (3, 0, ["parrot-bot"])
    assert System.objects.get(slug="parrot-bot").owner == owner
    assert System.objects.count() == 2
    talk = Conversation.objects.get(external_id="talk-2")
    speakers = [s.system for s in talk.speakers.order_by("index")]
    assert speakers == [existing, System.objects.get(slug="parrot-bot")]
    assert [(t.position, t.speaker, t.text) for t in talk.turns.all()] == [
        (0, 0, "hello, this is talk 2"),
        (1, 1, "hi! how are you?"),
        (2, 0, "fine, thanks."),
    ]
    assert Speaker.objects.filter(conversation__external_id="talk-3", system=None).count() == 2


@pytest.mark.django_db
def test_source_comes_from_the_line_then_the_argument_then_the_speakers():
    data = jsonl(
        conversation(1, source="bipartite-play"),
        conversation(2),
        conversation(3, speakers=["human", "human"]),
    )
    import_conversations(data=data, filename="c.jsonl")
    sources = dict(Conversation.objects.values_list("external_id", "source"))
    assert sources == {"talk-1": "bipartite-play", "talk-2": "imported", "talk-3": "human-human"}
    import_conversations(
        data=jsonl(conversation(4), conversation(5, speakers=["human", "human"])),
        filename="c.jsonl",
        source="self-play",
    )
    assert set(
        Conversation.objects.filter(external_id__in=["talk-4", "talk-5"]).values_list(
            "source", flat=True
        )
    ) == {"self-play"}


@pytest.mark.django_db
def test_importing_the_same_file_twice_adds_nothing():
    data = jsonl(conversation(1), conversation(2))
    import_conversations(data=data, filename="c.jsonl")
    again = import_conversations(data=data, filename="c.jsonl")
    assert (again.created, again.unchanged, again.systems_created) == (0, 2, [])
    assert (Conversation.objects.count(), Turn.objects.count(), System.objects.count()) == (
        2,
        6,
        1,
    )


@pytest.mark.django_db
def test_a_known_id_with_other_content_is_refused_and_nothing_is_written():
    import_conversations(data=jsonl(conversation(1)), filename="c.jsonl")
    changed = conversation(1, turns=[{"speaker": 0, "text": "a different opening"}])
    with pytest.raises(InvalidUpload) as raised:
        import_conversations(
            data=jsonl(conversation(5, speakers=["new-bot", "human"]), changed), filename="c.jsonl"
        )
    assert [str(p) for p in raised.value.problems] == [
        "line 2: conversation 'talk-1' is already in the catalog with different turns; "
        "give a changed conversation a new id."
    ]
    assert list(Conversation.objects.values_list("external_id", flat=True)) == ["talk-1"]
    assert not System.objects.filter(slug="new-bot").exists()


@pytest.mark.django_db
def test_a_bad_line_writes_nothing():
    data = jsonl(conversation(1), conversation(2, speakers=["human"]))
    with pytest.raises(InvalidUpload):
        import_conversations(data=data, filename="c.jsonl")
    assert not Conversation.objects.exists() and not System.objects.exists()


@pytest.mark.django_db
def test_the_upload_limit_applies(settings):
    settings.EVALHUB_MAX_UPLOAD_BYTES = 50
    with pytest.raises(InvalidUpload) as raised:
        import_conversations(data=jsonl(conversation(1)), filename="c.jsonl")
    assert "the limit is 50 bytes" in str(raised.value)


@pytest.mark.django_db
def test_queries_do_not_grow_with_the_file(django_assert_num_queries):
    def run(first: int, n: int, queries: int):
        rows = [conversation(i) for i in range(first, first + n)]
        with django_assert_num_queries(queries):
            import_conversations(data=jsonl(*rows), filename="c.jsonl")

    # Savepoint and release, stored ids, systems (2 reads, 1 insert), 3 bulk inserts.
    run(1, 3, 9)
    # parrot-bot exists now: no system insert. 120 turns stay within one bulk insert on
    # SQLite, whose 999 query parameters hold 124 turns of eight columns.
    run(100, 40, 8)


def timed(*moments, topics=None) -> list[dict]:
    """Three turns of `conversation`, with the given timestamps (None: no timestamp)."""
    turns = conversation()["turns"]
    for turn, moment in zip(turns, moments, strict=False):
        if moment is not None:
            turn["timestamp"] = moment
    for turn, topic in zip(turns, topics or [], strict=False):
        turn["topic"] = topic
    return turns


@pytest.mark.parametrize(
    "fields, expected",
    [
        (
            {"turns": timed("2024-05-01T12:00:05Z", "2024-05-01T12:00:04Z")},
            "line 2: turn 2: its timestamp is earlier than turn 1's.",
        ),
        (
            # A turn without a timestamp is skipped: turn 3 is compared with turn 1.
            {"turns": timed("2024-05-01T12:00:05Z", None, "2024-05-01T11:00:00Z")},
            "line 2: turn 3: its timestamp is earlier than turn 1's.",
        ),
        (
            {"turns": timed("2024-05-01T12:00:05")},
            "line 2: turn 1: 'timestamp' must be an ISO 8601 time with a UTC offset",
        ),
        (
            {"turns": timed("1969-12-31T23:59:59Z")},
            "line 2: turn 1: 'timestamp' must be an ISO 8601 time with a UTC offset",
        ),
        (
            {"turns": timed(1714564805)},
            "line 2: turn 1: 'timestamp' must be an ISO 8601 time with a UTC offset",
        ),
        (
            {"turns": timed(topics=["music", "x" * 61])},
            "line 2: turn 2: 'topic' must be a label of 1 to 60 characters.",
        ),
        ({"turns": timed(topics=[" "])}, "line 2: turn 1: 'topic' must be a label"),
        ({"turns": timed(topics=[3])}, "line 2: turn 1: 'topic' must be a label"),
        (
            {"user_rating": {"value": 6, "scale": [1, 5]}},
            "line 2: 'user_rating': the value 6 is not on its scale [1, 5].",
        ),
        (
            {"user_rating": {"value": 0.5, "scale": [1, 5]}},
            "line 2: 'user_rating': the value 0.5 is not on its scale [1, 5].",
        ),
        (
            {"user_rating": {"value": 3, "scale": [5, 1]}},
            "line 2: 'user_rating': the scale [5, 1] must go from lowest to highest.",
        ),
        ({"user_rating": 4}, "line 2: 'user_rating' must be {\"value\": number"),
        ({"user_rating": {"value": 4}}, "line 2: 'user_rating' must be {\"value\": number"),
        (
            {"user_rating": {"value": True, "scale": [0, 1]}},
            "line 2: 'user_rating': the value True is not on its scale [0, 1].",
        ),
        (
            {"user_rating": {"value": 3, "scale": [1, "5"]}},
            "line 2: 'user_rating' must be {\"value\": number",
        ),
    ],
)
def test_timestamps_topics_and_user_ratings_are_checked(fields, expected):
    found = problems_of(jsonl(conversation(1), conversation(2, **fields), conversation(3)))
    assert len(found) == 1
    assert found[0].startswith(expected)


@pytest.mark.django_db
def test_timestamps_topics_and_user_ratings_are_stored():
    turns = timed(
        "2024-05-01T12:00:00Z",
        "2024-05-01T14:00:02+02:00",  # the same instant as 12:00:02 UTC
        None,
        topics=["greeting", "greeting"],
    )
    rated = conversation(1, turns=turns, user_rating={"value": 4.5, "scale": [1, 5]})
    result = import_conversations(data=jsonl(rated, conversation(2)), filename="c.jsonl")
    assert result.created == 2
    stored = Conversation.objects.get(external_id="talk-1")
    assert (stored.user_rating, stored.user_rating_min, stored.user_rating_max) == (4.5, 1, 5)
    rows = list(stored.turns.order_by("position"))
    assert [t.timestamp.isoformat() if t.timestamp else None for t in rows] == [
        "2024-05-01T12:00:00+00:00",
        "2024-05-01T12:00:02+00:00",
        None,
    ]
    assert [t.topic for t in rows] == ["greeting", "greeting", ""]
    plain = Conversation.objects.get(external_id="talk-2")
    assert plain.user_rating is None
    assert not plain.turns.exclude(timestamp=None).exists()
    assert set(plain.turns.values_list("topic", flat=True)) == {""}


@pytest.mark.django_db
def test_a_second_import_with_timestamps_adds_nothing_and_a_changed_one_is_refused():
    rated = conversation(
        1, turns=timed("2024-05-01T12:00:00Z"), user_rating={"value": 4, "scale": [1, 5]}
    )
    import_conversations(data=jsonl(rated), filename="c.jsonl")
    again = import_conversations(data=jsonl(rated), filename="c.jsonl")
    assert (again.created, again.unchanged) == (0, 1)
    for changed in (
        {**rated, "user_rating": {"value": 3, "scale": [1, 5]}},
        {**rated, "turns": timed("2024-05-01T12:00:01Z")},
        {**rated, "turns": timed("2024-05-01T12:00:00Z", topics=["music"])},
    ):
        with pytest.raises(InvalidUpload, match="different turns|different user_rating"):
            import_conversations(data=jsonl(changed), filename="c.jsonl")
    stored = Conversation.objects.get(external_id="talk-1")
    assert stored.user_rating == 4
    assert [t.topic for t in stored.turns.all()] == ["", "", ""]


SEED = [{"speaker": 0, "text": "Hi, how are you?"}, {"speaker": 1, "text": "Fine, you?"}]


@pytest.mark.django_db
def test_the_seed_is_stored_apart_from_the_turns_and_a_changed_one_is_refused():
    import_conversations(data=jsonl(conversation(seed=SEED)), filename="c.jsonl")
    stored = Conversation.objects.get(external_id="talk-1")
    assert stored.seed_turns == SEED
    assert stored.turns.count() == 3  # the seed is no speaker's turn
    assert (
        import_conversations(data=jsonl(conversation(seed=SEED)), filename="c.jsonl").created == 0
    )
    changed = [{"speaker": 0, "text": "Hello!"}, SEED[1]]
    with pytest.raises(InvalidUpload, match="different seed"):
        import_conversations(data=jsonl(conversation(seed=changed)), filename="c.jsonl")


@pytest.mark.parametrize(
    "seed, expected",
    [
        ("hello", "'seed' must be a list of at most 10 turns."),
        ([{"speaker": 0}], 'seed turn 1: must be an object {"speaker", "text"}.'),
        ([{"speaker": 5, "text": "x"}], "seed turn 1: speaker 5 is out of range (0 to 1)."),
        ([{"speaker": 0, "text": " "}], "seed turn 1: 'text' must be a non-empty string."),
    ],
)
def test_a_bad_seed_is_refused_with_its_line(seed, expected):
    assert problems_of(jsonl(conversation(seed=seed))) == [f"line 1: {expected}"]
