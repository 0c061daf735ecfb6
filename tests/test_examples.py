"""docs/examples/: every sample upload file goes through the real importer without a problem."""

import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import Campaign
from evalhub.models import Conversation
from evalhub.services import create_prompt_set, import_conversations, submit_responses
from tests import factories
from tests.annotation.test_manage import form_data

pytestmark = pytest.mark.django_db
EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"


def example(name: str) -> bytes:
    return (EXAMPLES / name).read_bytes()


def test_every_example_is_tested_here():
    tested = {
        "prompts.txt",
        "prompts.jsonl",
        "responses.txt",
        "responses.jsonl",
        "responses.csv",
        "conversations.jsonl",
        "gold-and-training.jsonl",
    }
    assert {path.name for path in EXAMPLES.iterdir()} == tested


@pytest.mark.parametrize("name", ["prompts.txt", "prompts.jsonl"])
def test_the_prompt_set_examples_import(name):
    prompt_set = create_prompt_set(
        slug="example", name="Example", data=example(name), filename=name
    )
    prompts = list(prompt_set.prompts.order_by("position"))
    assert len(prompts) == 3
    ids = ["1", "2", "3"] if name.endswith(".txt") else ["q1", "q2", "q3"]
    assert [p.external_id for p in prompts] == ids
    if name.endswith(".jsonl"):
        assert len(prompts[1].context) == 3 and len(prompts[2].references) == 2


@pytest.mark.parametrize("name", ["responses.txt", "responses.jsonl", "responses.csv"])
def test_the_response_examples_answer_the_example_prompt_set(name):
    prompt_set = create_prompt_set(
        slug="example", name="Example", data=example("prompts.jsonl"), filename="prompts.jsonl"
    )
    submission = submit_responses(
        system=factories.system(factories.user()),
        prompt_set=prompt_set,
        data=example(name),
        filename=name,
    )
    texts = list(submission.responses.values_list("prompt__external_id", "text"))
    assert texts == [
        ("q1", "i am fine , thanks . and you ?"),
        ("q2", "watercolours are lovely . start with cheap paper ."),
        ("q3", "i am sorry . do you want to talk about it ?"),
    ]
    assert submission.warnings == []


def test_the_conversations_example_imports():
    result = import_conversations(data=example("conversations.jsonl"), filename="c.jsonl")
    assert (result.created, result.unchanged) == (3, 0)
    assert sorted(result.systems_created) == ["example-bot", "other-bot"]
    assert Conversation.objects.get(external_id="example-3").source == "self-play"


def test_the_gold_and_training_example_sets_up_an_abc_eval_campaign(client):
    client.force_login(factories.user("boss", staff=True))
    data = form_data(
        task_kind="abc_eval",
        slug="example-empathy",
        task_config=json.dumps({"behaviour_task": "empathy"}),
        requires_training="on",
        conversations=SimpleUploadedFile("conversations.jsonl", example("conversations.jsonl")),
        gold_items=SimpleUploadedFile(
            "gold-and-training.jsonl", example("gold-and-training.jsonl")
        ),
    )
    response = client.post(reverse("annotation:manage-campaign-create"), data, follow=True)
    assert response.status_code == 200, response.content.decode()[:3000]
    campaign = Campaign.objects.get(slug="example-empathy")
    assert campaign.requires_training
    training = campaign.items.get(role="training")
    assert training.gold["explanations"]["3"].startswith("Answering grief")
    assert campaign.items.filter(role="gold").exists()
    assert campaign.items.filter(role="task").exists()
