"""Prompt sets, responses and conversations in the Hugging Face layout: Parquet, or JSON
lines with a column mapping, checked by the existing checks with their row numbers, and
stored whole or not at all. An export imports again unchanged."""

import io
import json
import zipfile

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evalhub.hf import bundle, card, catalog
from evalhub.importers import hf_layout
from evalhub.importers.problems import InvalidUpload
from evalhub.models import Conversation, Prompt, PromptSet, Submission
from evalhub.services import create_prompt_set, import_conversations, submit_responses
from tests import factories

pytestmark = pytest.mark.django_db


def parquet(rows: list[dict]) -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), sink)
    return sink.getvalue()


def jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def exported(tables) -> dict[str, bytes]:
    """Each table's Parquet file, as the dataset download holds it."""
    sink = io.BytesIO()
    bundle.write_dataset(tables, card.CardText(title="t"), sink)
    with zipfile.ZipFile(sink) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def new_set(data: bytes, filename: str, columns=None, slug="hf") -> PromptSet:
    return create_prompt_set(slug=slug, name="HF", data=data, filename=filename, columns=columns)


def problems(refused) -> list[tuple]:
    return [(p.line, p.field, p.message) for p in refused.value.problems]


def test_a_prompt_sets_export_imports_again_unchanged():
    original = factories.prompt_set(4)
    files = exported(catalog.prompt_tables(original))
    again = new_set(files["data/prompts.parquet"], "prompts.parquet")
    fields = ("external_id", "context", "references")
    assert list(again.prompts.order_by("position").values_list(*fields)) == list(
        original.prompts.order_by("position").values_list(*fields)
    )


def test_prompts_from_a_hub_dataset_with_its_own_column_names():
    data = parquet(
        [
            {"question_id": "q1", "instruction": "Say hi.", "output": "Hi."},
            {"question_id": "q2", "instruction": "Say bye.", "output": "Bye."},
        ]
    )
    columns = "id=question_id, prompt=instruction, references=output"
    prompt_set = new_set(data, "train.parquet", columns)
    assert list(prompt_set.prompts.values_list("external_id", "context", "references")) == [
        ("q1", ["Say hi."], ["Hi."]),
        ("q2", ["Say bye."], ["Bye."]),
    ]


def test_prompts_from_chat_messages_take_their_contents_and_row_numbers_as_ids():
    rows = [
        {"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yo"}]}
    ]
    prompt_set = new_set(jsonl(rows), "chat.jsonl", "messages=messages")
    assert list(prompt_set.prompts.values_list("external_id", "context")) == [("1", ["Hi", "Yo"])]


def test_bad_rows_are_refused_with_their_row_numbers_and_nothing_is_stored():
    rows = [
        {"id": "a", "prompt": "fine"},
        {"id": "b", "prompt": ""},
        {"id": "a", "prompt": "again"},
    ]
    with pytest.raises(InvalidUpload) as refused:
        new_set(parquet(rows), "p.parquet")
    assert problems(refused) == [
        (2, None, "'context' must be a list of one or more non-empty utterances."),
        (3, None, "duplicate id 'a' (first on line 1)."),
    ]
    assert not PromptSet.objects.exists() and not Prompt.objects.exists()


def test_a_mapping_to_a_missing_column_is_refused_before_any_row_is_read():
    with pytest.raises(InvalidUpload) as refused:
        new_set(parquet([{"text": "x"}]), "p.parquet", "prompt=instruction")
    [(line, field, message)] = problems(refused)
    assert (line, field) == (None, "columns")
    assert message == "the file has no column 'instruction' (for prompt); its columns: text."


def test_a_file_without_any_prompt_column_says_to_map_one():
    with pytest.raises(InvalidUpload) as refused:
        new_set(parquet([{"text": "x"}]), "p.parquet")
    assert problems(refused)[0][2].startswith(
        "the file has no column for prompt or context or messages: map one"
    )


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        ("prompt", "'prompt' is not ours=theirs (e.g. prompt=instruction)."),
        ("answer=output", "'answer' is none of the columns EvalHub reads for prompts: "),
    ],
)
def test_a_malformed_mapping_is_refused_on_its_field(columns, message):
    with pytest.raises(InvalidUpload) as refused:
        hf_layout.parse_mapping(columns, "prompts")
    [(_, field, said)] = problems(refused)
    assert field == "columns" and said.startswith(message)


def test_a_file_that_is_not_parquet_is_refused_plainly():
    with pytest.raises(InvalidUpload) as refused:
        new_set(b"PAR1 not really", "p.parquet")
    assert problems(refused)[0][2].startswith("Not a readable Parquet file")


def test_data_over_the_limit_uncompressed_are_refused(settings):
    data = parquet([{"prompt": "x" * 10_000} for _ in range(20)])
    settings.EVALHUB_MAX_UPLOAD_BYTES = len(data) + 100
    with pytest.raises(InvalidUpload) as refused:
        new_set(data, "p.parquet")
    assert "bytes uncompressed; the limit is" in problems(refused)[0][2]


def test_a_submissions_export_imports_again_for_another_system():
    prompt_set = factories.prompt_set(3)
    first = factories.submission(factories.system(), prompt_set, ["one", "two", "three"])
    files = exported(catalog.response_tables(first))
    again = submit_responses(
        system=factories.system(),
        prompt_set=prompt_set,
        data=files["data/responses.parquet"],
        filename="responses.parquet",
    )
    assert again.format == Submission.Format.HF
    texts = list(again.responses.order_by("prompt__position").values_list("text", flat=True))
    assert texts == ["one", "two", "three"]


def test_responses_with_an_unknown_prompt_are_refused_with_their_row():
    prompt_set = factories.prompt_set(2)
    rows = [{"qid": "1", "output": "a"}, {"qid": "9", "output": "b"}]
    with pytest.raises(InvalidUpload) as refused:
        submit_responses(
            system=factories.system(),
            prompt_set=prompt_set,
            data=jsonl(rows),
            filename="r.jsonl",
            columns="id=qid, response=output",
        )
    assert (2, None, "unknown prompt id '9'.") in problems(refused)
    assert not Submission.objects.exists()


def test_conversations_export_and_import_again_unchanged():
    lines = [
        {
            "id": "c1",
            "domain": "chitchat",
            "speakers": ["human", "alpha"],
            "turns": [{"speaker": p % 2, "text": t} for p, t in enumerate(["Hi", "Yo", "?"])],
            "metadata": {"topic": "greetings"},
        },
        {
            "id": "c2",
            "domain": "chitchat",
            "speakers": ["alpha", "beta"],
            "turns": [{"speaker": 1, "text": "B first"}, {"speaker": 0, "text": "A"}],
        },
    ]
    assert import_conversations(data=jsonl(lines), filename="c.jsonl").created == 2
    rows = [
        catalog.conversation_row(c)
        for c in Conversation.objects.prefetch_related("speakers__system", "turns")
    ]
    data = parquet_declared(rows, catalog.conversations_schema())
    result = import_conversations(data=data, filename="conversations.parquet")
    assert (result.created, result.unchanged) == (0, 2)


def parquet_declared(rows, schema) -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), sink)
    return sink.getvalue()


def test_chat_conversations_with_a_model_column_become_human_and_system_turns():
    factories.system(slug="vicuna")
    rows = [
        {
            "conversation_id": "x1",
            "domain": "chitchat",
            "model": "vicuna",
            "conversation": [
                {"role": "system", "content": "Be nice."},
                {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": "Hello!"},
            ],
        }
    ]
    result = import_conversations(
        data=parquet(rows),
        filename="chats.parquet",
        columns="id=conversation_id, messages=conversation",
    )
    assert result.created == 1
    conversation = Conversation.objects.get(external_id="x1")
    speakers = [s.system.slug if s.system_id else "human" for s in conversation.speakers.all()]
    assert speakers == ["human", "vicuna"]
    turns = list(conversation.turns.order_by("position").values_list("speaker", "text"))
    assert turns == [(0, "Hi"), (1, "Hello!")]
    assert conversation.metadata == {"system": ["Be nice."]}


def test_a_chat_without_a_model_is_refused_on_its_row():
    rows = [{"id": "x1", "messages": [{"role": "user", "content": "Hi"}]}] * 1 + [
        {"id": "x2", "messages": [{"role": "user", "content": "Hi"}]}
    ]
    with pytest.raises(InvalidUpload) as refused:
        import_conversations(data=jsonl(rows), filename="c.jsonl", columns="id=id")
    assert problems(refused)[0] == (
        1,
        None,
        "no 'speakers' and no 'model': say which system answers (map model=...).",
    )
    assert not Conversation.objects.exists()


def test_the_import_command_reads_parquet_with_a_mapping(tmp_path):
    from django.core.management import call_command

    factories.system(slug="vicuna")
    rows = [
        {
            "cid": "z1",
            "domain": "chitchat",
            "model": "vicuna",
            "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yo"}],
        }
    ]
    path = tmp_path / "chats.parquet"
    path.write_bytes(parquet(rows))
    call_command("import_conversations", str(path), "--columns", "id=cid", stdout=io.StringIO())
    assert Conversation.objects.get(external_id="z1").turns.count() == 2
