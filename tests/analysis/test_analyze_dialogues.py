"""`manage.py analyze_dialogues`: the Alexa metrics of a set of conversations as JSON."""

import json

import pytest
from django.core.management import CommandError, call_command

from tests.analysis.dialogue_world import build_world

pytestmark = pytest.mark.django_db


def test_the_command_writes_the_result_contract(tmp_path):
    build_world()
    out = tmp_path / "alexa.json"
    call_command("analyze_dialogues", "domain", "chitchat", "--json", str(out))
    result = json.loads(out.read_text())
    assert result["kind"] == "dialogue_metrics" and result["conversations"] == 5
    assert [s["system"] for s in result["systems"]] == ["alpha", "beta", "secret"]
    assert set(result["rankings"]) == {"stack", "winners_circle", "confidence_bands"}
    # Winners: the two best user ratings (secret 5, alpha 4).
    assert result["winners"] == ["secret", "alpha"]
    beta = next(s for s in result["systems"] if s["system"] == "beta")
    # h-beta: 1 error in 2 judged responses; bb-1 is unjudged.
    assert beta["response_error_rate"]["value"] == 0.5


def test_weights_winners_and_error_labels_are_passed_on(tmp_path):
    build_world()
    out = tmp_path / "alexa.json"
    call_command(
        "analyze_dialogues", "study", "abc-study", "--json", str(out),
        "--winner", "beta", "--error-label", "redundant", "--weight", "mean_rating=3",
    )  # fmt: skip
    result = json.loads(out.read_text())
    assert result["winners"] == ["beta"] and result["error_labels"] == ["redundant"]
    rates = {s["system"]: s["response_error_rate"]["value"] for s in result["systems"]}
    assert rates == {"alpha": 0.5, "beta": 0.0}
    stack = {r["system"]: r["scores"]["mean_rating"] for r in result["rankings"]["stack"]["rows"]}
    assert stack == {"alpha": 2, "beta": 1}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["domain", "nowhere"], "No conversation has the domain"),
        (["domain", "chitchat", "--weight", "charm=1"], "Unknown metric in weights"),
        (["domain", "chitchat", "--weight", "oops"], "METRIC=NUMBER"),
    ],
)
def test_bad_input_is_a_clear_error(tmp_path, args, message):
    build_world()
    with pytest.raises(CommandError, match=message):
        call_command("analyze_dialogues", *args, "--json", str(tmp_path / "x.json"))
