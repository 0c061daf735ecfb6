"""import_abceval: a published ABC-Eval study becomes finished campaigns shaped like live
ones, checked first (every problem with its file and line, nothing written), idempotent."""

import pytest

from annotation.importers.abceval.study import StudyInvalid, import_abceval
from annotation.kinds import abc_eval, get_kind
from annotation.kinds import likert as likert_kind
from annotation.models import Assignment, Batch, Campaign, Item, Judgment, Study, Worker
from evalhub.models import Conversation, System
from tests import factories

from . import abceval_files as f

pytestmark = pytest.mark.django_db


def run(tmp_path, **overrides):
    return import_abceval(
        name="ABC small", slug="abc-small", **f.given(f.write(tmp_path, **overrides))
    )


def problems(tmp_path, **overrides) -> list[str]:
    with pytest.raises(StudyInvalid) as raised:
        run(tmp_path, **overrides)
    return [str(p) for p in raised.value.problems]


def assert_nothing_written():
    for model in (Study, Campaign, Item, Judgment, Worker, Conversation, System):
        assert not model.objects.exists(), model


def campaign(kind: str, **config) -> Campaign:
    found = Campaign.objects.filter(study__slug="abc-small", task_kind=kind)
    for key, value in config.items():
        found = found.filter(**{f"task_config__{key}": value})
    return found.get()


def test_a_study_becomes_finished_campaigns_one_per_kind_and_behaviour_task(tmp_path):
    result = run(tmp_path)
    study = Study.objects.get()
    assert (study.slug, study.name, study.source) == ("abc-small", "ABC small", "abc-eval")
    campaigns = {c.slug: c for c in study.campaigns.all()}
    assert sorted(campaigns) == [
        "abc-small-comparative",
        "abc-small-consistency",
        "abc-small-empathy",
        "abc-small-knowledge",
        "abc-small-likert",
    ]
    assert {c.status for c in campaigns.values()} == {Campaign.Status.FINISHED}
    assert campaigns["abc-small-empathy"].task_config == {"behaviour_task": "empathy"}
    assert campaigns["abc-small-likert"].task_config == {
        "level": "dialogue",
        "dimensions": ["consistency", "quality"],
    }
    assert campaigns["abc-small-comparative"].task_config["dimensions"] == [
        "consistency",
        "quality",
    ]
    for c in campaigns.values():  # every stored config is one the kind accepts
        assert get_kind(c.task_kind).clean_config(c.task_config)
    assert (result.conversations_created, result.dialogues_without_text) == (2, 1)
    assert result.judgments == 3 * 3 + 2 + 1
    assert Judgment.objects.count() == 12
    assert sorted(System.objects.values_list("slug", flat=True)) == ["bot-a", "bot-b"]


def test_behaviour_judgments_are_shaped_like_live_ones(tmp_path):
    run(tmp_path)
    empathy = campaign("abc_eval", behaviour_task="empathy")
    item = empathy.items.get(group_key="c1:empathy")
    conversation = Conversation.objects.prefetch_related("speakers__system", "turns").get(
        external_id="c1"
    )
    [live], _ = abc_eval.build_items([conversation], {"behaviour_task": "empathy"})
    assert item.content == live.content and item.conversation_id == conversation.pk
    payloads = {j.worker.external_id: j.payload for j in item.judgments.select_related("worker")}
    assert payloads == {
        "abc-small:a1": {"labels": {"empathetic": [0, 0], "lack of empathy": [0, 1]}},
        "abc-small:a2": {"labels": {"empathetic": [1, 0], "lack of empathy": [0, 1]}},
    }
    # The release's "incorrect fact" is Table 4's fact contradiction, the knowledge task's.
    knowledge = campaign("abc_eval", behaviour_task="knowledge")
    judgment = knowledge.judgments.get(item__group_key="c2:knowledge")
    assert judgment.payload == {"labels": {"fact contradiction": [0, 1, 0]}}
    assert judgment.client_duration_ms is None and judgment.seconds == 0
    assert judgment.assignment.status == Assignment.Status.SUBMITTED
    assert judgment.assignment.batch == judgment.item.batch
    assert set(Worker.objects.values_list("provider", flat=True)) == {"imported"}
    row = abc_eval.KIND.export_row(judgment)
    assert (row["system"], row["conversation"], row["labels"]) == (
        "bot-b",
        "c2",
        {"fact contradiction": [0, 1, 0]},
    )
    assert empathy.redundancy == 2


def test_likert_scores_of_a_dialogue_without_text_are_imported_with_its_bot(tmp_path):
    run(tmp_path)
    textless = Conversation.objects.get(external_id=f.TEXTLESS)
    assert textless.text_available is False and not textless.turns.exists()
    assert [str(s) for s in textless.speakers.all()] == ["human", "bot-b"]
    assert Conversation.objects.get(external_id="c1").text_available is True
    likert = campaign("likert")
    by_conversation = {
        j.item.conversation.external_id: j
        for j in likert.judgments.select_related("item__conversation")
    }
    assert sorted(by_conversation) == [f.TEXTLESS, "c1"]  # c1 named by its source id
    dark = by_conversation[f.TEXTLESS]
    assert dark.payload == {"ratings": {"quality": 2, "consistency": 3}}
    assert dark.client_duration_ms == 30000
    assert dark.item.content["text_available"] is False
    assert dark.item.content["meta"]["system"] == "bot-b"
    lit = by_conversation["c1"]
    assert lit.client_duration_ms == 60500
    [live], _ = likert_kind.build_items(
        [Conversation.objects.prefetch_related("speakers__system", "turns").get(external_id="c1")]
    )
    assert lit.item.content == live.content
    assert likert_kind.KIND.export_row(dark)["system"] == "bot-b"


def test_a_comparison_recorded_from_both_sides_is_one_judgment(tmp_path):
    run(tmp_path)
    comparative = campaign("comparative")
    [judgment] = comparative.judgments.select_related("item")
    assert judgment.payload == {"choices": {"quality": "a", "consistency": "neither"}, "left": None}
    meta = judgment.item.content["meta"]
    assert (meta["a"], meta["b"], meta["systems_a"], meta["systems_b"]) == (
        "c1",
        f.TEXTLESS,
        ["bot-a"],
        ["bot-b"],
    )
    assert judgment.item.content["left_is"] is None
    assert judgment.item.content["text_available"] == {"a": True, "b": False}
    assert len(judgment.item.content["dialogues"]["a"]) == 4
    assert judgment.item.content["dialogues"]["b"] == []
    assert judgment.client_duration_ms == 90000
    row = get_kind("comparative").export_row(judgment)
    assert row["choices"] == {"quality": "a", "consistency": "neither"}


def test_a_second_import_adds_nothing(tmp_path):
    run(tmp_path)
    counts = [m.objects.count() for m in (Campaign, Batch, Item, Judgment, Worker, Conversation)]
    again = run(tmp_path)
    assert again.study_created is False
    assert (again.judgments, again.judgments_unchanged) == (0, 12)
    assert (again.conversations_created, again.dialogues_without_text) == (0, 0)
    assert [
        m.objects.count() for m in (Campaign, Batch, Item, Judgment, Worker, Conversation)
    ] == counts


def test_an_extended_file_adds_only_its_new_judgments(tmp_path):
    run(tmp_path)
    more = f.likert() + [
        {
            "dialogue": f.C2,
            "bot": "bot-b",
            "label": "quality",
            "worker": "w3",
            "score": 3,
            "seconds": 9,
        }
    ]
    result = run(tmp_path, likert=more)
    assert result.judgments == 1 and result.judgments_unchanged == 12
    judgment = campaign("likert").judgments.get(worker__external_id="abc-small:w3")
    assert judgment.item.conversation.external_id == "c2"


def test_bad_lines_are_reported_with_file_and_line_and_nothing_is_written(tmp_path):
    likert = f.likert()
    likert[1] = {**likert[1], "score": 6}
    likert[3] = {**likert[3], "seconds": -1}
    behaviours = f.behaviours()
    behaviours[2] = {**behaviours[2], "conversation": "c9"}
    found = problems(tmp_path, likert=likert, behaviours=[*behaviours, "{oops"])
    assert found == [
        "behaviours.jsonl line 3: unknown conversation 'c9': it is not in the conversations file.",
        "behaviours.jsonl line 4: not valid JSON (Expecting property name enclosed in double "
        "quotes, column 2).",
        "likert.jsonl line 2: 'score' must be a whole number from 1 to 5, not 6.",
        "likert.jsonl line 4: 'seconds' must be a number from 0 to 86400, or null.",
    ]
    assert_nothing_written()


def test_an_unknown_label_is_refused_with_the_allowed_ones(tmp_path):
    behaviours = f.behaviours()
    behaviours[0]["labels"]["rudeness"] = [0, 0]
    [message] = problems(tmp_path, behaviours=behaviours)
    assert message.startswith("behaviours.jsonl line 1: unknown label 'rudeness' (allowed: ")
    assert "fact contradiction" in message and "topic switch" in message
    likert = f.likert()
    likert[0]["label"] = "fun"
    [message] = problems(tmp_path, likert=likert)
    assert message.startswith("likert.jsonl line 1: unknown label 'fun' (allowed: consistency")
    assert_nothing_written()


def test_flags_must_match_the_bot_turns(tmp_path):
    behaviours = f.behaviours()
    behaviours[2]["labels"]["empathetic"] = [0, 0]
    behaviours[0]["labels"]["redundant"] = [0, 2]
    assert problems(tmp_path, behaviours=behaviours) == [
        "behaviours.jsonl line 1: 'redundant' must be a list of 0 and 1 flags.",
        "behaviours.jsonl line 3: 'empathetic' has 2 flags; conversation 'c2' has 3 bot turns.",
    ]
    assert_nothing_written()


def test_the_two_sides_of_a_comparison_must_agree(tmp_path):
    rows = f.comparative()
    rows[2]["score"] = 1
    assert problems(tmp_path, comparative=rows) == [
        "comparative.jsonl line 3: score 1 contradicts line 1, the same comparison from the "
        "other side (score 1)."
    ]
    assert_nothing_written()


def test_a_dialogue_has_one_bot(tmp_path):
    likert = f.likert()
    likert[0]["bot"] = likert[1]["bot"] = "bot-b"  # c1 is bot-a's
    likert[2]["bot"] = likert[3]["bot"] = "bot-c"  # the comparison says bot-b
    assert problems(tmp_path, likert=likert) == [
        "likert.jsonl line 1: dialogue '(1,1)_bot_a' is conversation 'c1', whose bot is "
        "'bot-a', not 'bot-b'.",
        "likert.jsonl line 2: dialogue '(1,1)_bot_a' is conversation 'c1', whose bot is "
        "'bot-a', not 'bot-b'.",
    ] + [
        f"comparative.jsonl line {n}: dialogue '(9,1)_bot_b' is by 'bot-b' here and by "
        "'bot-c' in likert.jsonl line 3."
        for n in (1, 2, 3, 4)
    ]
    assert_nothing_written()


def test_conversations_must_be_between_a_person_and_a_bot(tmp_path):
    rows = f.conversations()
    rows[1]["speakers"] = ["bot-a", "bot-b"]
    found = problems(tmp_path, conversations=rows)
    assert found[0] == (
        "conversations.jsonl line 2: conversation 'c2' must be between one person and one bot "
        "(speakers ['bot-a', 'bot-b'])."
    )
    assert_nothing_written()


def test_a_slug_of_another_kind_of_study_and_bad_arguments_are_refused(tmp_path):
    with pytest.raises(StudyInvalid) as raised:
        import_abceval(name=" ", slug="not a slug", **f.given(f.write(tmp_path)))
    assert [p.as_dict() for p in raised.value.problems] == [
        {"field": "name", "message": "give a name of 1 to 200 characters."},
        {
            "field": "slug",
            "message": "'not a slug' is not a slug (letters, digits, - and _, at most 80).",
        },
    ]
    assert_nothing_written()


def test_a_catalog_dialogue_with_another_bot_stops_everything(tmp_path):
    factories.conversation(f.TEXTLESS, [None, factories.system(slug="bot-z")], ["hi", "yo"])
    found = problems(tmp_path)
    assert found == [
        "likert.jsonl line 3: dialogue '(9,1)_bot_b' is in the catalog with the speakers "
        "['human', 'bot-z'], not ['human', 'bot-b']."
    ]
    assert not Study.objects.exists() and not Judgment.objects.exists()
    assert Conversation.objects.count() == 1


def test_a_conversation_stored_with_other_text_stops_everything(tmp_path):
    factories.conversation("c1", [None, factories.system(slug="bot-a")], ["Hi!", "Other."])
    found = problems(tmp_path)
    assert found == [
        "conversations.jsonl line 1: conversation 'c1' is already in the catalog with "
        "different domain, metadata, turns; give a changed conversation a new id."
    ]
    assert not Study.objects.exists() and not Judgment.objects.exists()
    assert list(Conversation.objects.values_list("external_id", flat=True)) == ["c1"]


def test_staff_see_the_study_and_its_campaigns_in_the_admin_but_cannot_change_it(tmp_path, client):
    run(tmp_path)
    client.force_login(factories.user("boss", staff=True))
    study = Study.objects.get()
    page = client.get(f"/admin/annotation/study/{study.pk}/change/")
    assert page.status_code == 200
    assert "abc-small-likert (likert)" in page.content.decode()
    assert client.post(f"/admin/annotation/study/{study.pk}/delete/").status_code == 403
    assert Study.objects.filter(pk=study.pk).exists()


def test_unstorable_text_and_broken_json_are_line_numbered_problems(tmp_path):
    conversations = f.conversations()
    conversations[1]["turns"][0]["text"] = "Hi\u0000there."
    found = problems(
        tmp_path,
        conversations=conversations,
        likert=[*f.likert(), '{"deep": ' + "[" * 100_000, '{"n": ' + "9" * 5000 + "}"],
    )
    n_likert = len(f.likert())
    # (The refused conversation's judgments are then reported as of an unknown one.)
    assert set(found) >= {
        "conversations.jsonl line 2: a string holds a NUL character (\\u0000), which cannot "
        "be stored.",
        f"likert.jsonl line {n_likert + 1}: the JSON is nested deeper than 32 levels.",
        f"likert.jsonl line {n_likert + 2}: a number is too long to read (more than 4300 digits).",
    }
    assert_nothing_written()
