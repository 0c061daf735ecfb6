"""Each tournament kind's settings are a declared schema: unknown keys, wrong types and
values out of range are refused with a message naming the setting; defaults fill the rest."""

from decimal import Decimal

import pytest

from evalhub.declared import DeclaredInvalid, check
from tournaments.models import Tournament
from tournaments.tournament_settings import (
    SCHEMAS,
    ABSettings,
    SpotTheBotSettings,
    settings_errors,
)


@pytest.mark.parametrize(
    ("kind", "given", "field", "message"),
    [
        (
            "spot_the_bot",
            {"conversations_per_pair": 0},
            "conversations_per_pair",
            "from 1 to 1000, got 0",
        ),
        (
            "spot_the_bot",
            {"conversations_per_pair": 5_000_000},
            "conversations_per_pair",
            "from 1 to 1000, got 5000000",
        ),
        ("spot_the_bot", {"exchanges": 51}, "exchanges", "exchanges must be from 1 to 50"),
        ("spot_the_bot", {"segment_lengths": [0]}, "segment_lengths", "must be at least 1, got 0"),
        ("spot_the_bot", {"segment_lengths": [60]}, "segment_lengths", "at most 50"),
        ("spot_the_bot", {"human_share": 0.95}, "human_share", "from 0.0 to 0.9, got 0.95"),
        (
            "spot_the_bot",
            {"batch_size": 0},
            "batch_size",
            "batch_size must be from 1 to 200, got 0",
        ),
        ("spot_the_bot", {"max_batches_per_worker": 101}, "max_batches_per_worker", "1 to 100"),
        ("spot_the_bot", {"judgments_per_segment": 21}, "judgments_per_segment", "1 to 20"),
        ("spot_the_bot", {"batch_size": "20"}, "batch_size", "must be a whole number, got '20'"),
        ("spot_the_bot", {"features": ["Bad"]}, "features", "Feature name 'Bad'"),
        ("ab", {"judgments_per_prompt": 0}, "judgments_per_prompt", "from 1 to 20, got 0"),
        ("ab", {"prompts_per_batch": 0}, "prompts_per_batch", "from 1 to 100, got 0"),
        ("ab", {"prompts_per_batch": 101}, "prompts_per_batch", "from 1 to 100, got 101"),
        ("ab", {"reward_per_judgment": Decimal("-0.01")}, "reward_per_judgment", "from 0 to 100"),
        ("ab", {"reward_per_judgment": Decimal("100.5")}, "reward_per_judgment", "from 0 to 100"),
        ("ab", {"judgments_per_prompt": 2.5}, "judgments_per_prompt", "must be a whole number"),
    ],
)
def test_a_bad_setting_is_refused_next_to_its_field(kind, given, field, message):
    errors = settings_errors(kind, given)
    assert list(errors) == [field]
    assert message in errors[field]


@pytest.mark.parametrize(
    ("schema", "typo", "name"),
    [
        (SpotTheBotSettings, "batchsize", "Spot The Bot tournament setting"),
        (ABSettings, "prompt_per_batch", "A/B tournament setting"),
    ],
)
def test_an_unknown_setting_is_refused_naming_the_allowed_ones(schema, typo, name):
    with pytest.raises(DeclaredInvalid) as raised:
        check(schema, {typo: 3})
    message = raised.value.errors[typo]
    assert f"{typo!r} is an unknown {name}; allowed:" in message
    assert all(field in message for field in schema.model_fields)


def test_fine_settings_have_no_errors():
    assert settings_errors("spot_the_bot", {"batch_size": 200, "human_share": 0.0}) == {}
    assert settings_errors("ab", {"reward_per_judgment": Decimal("0.05")}) == {}
    # Fields that are not settings (systems, ...) and values not given are left alone.
    assert settings_errors("ab", {"baselines": ["x"], "prompts_per_batch": None}) == {}


@pytest.mark.parametrize("kind", ["spot_the_bot", "ab"])
def test_the_schema_defaults_are_the_models_defaults(kind):
    defaults = check(SCHEMAS[kind], {})
    empty = Tournament()
    for name, value in defaults.items():
        # str: the schema dumps a decimal as JSON text, the model's default is the number
        assert str(getattr(empty, name)) == str(value), name
