import hashlib
import json
from dataclasses import asdict, dataclass

import pytest

from analysis.reports.common import canonical_digest


@dataclass(frozen=True)
class Inner:
    labels: tuple
    weights: dict


@dataclass(frozen=True)
class Outer:
    subject: str
    rows: tuple
    inner: Inner


def example(subject="demo"):
    inner = Inner(labels=("bot", "human"), weights={"b": 2, "a": 1.5})
    return Outer(subject=subject, rows=((1, "x"), (2, "y")), inner=inner)


def asdict_digest(value):
    text = json.dumps(asdict(value), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


def test_digest_of_a_dataclass_is_the_digest_of_its_asdict_json():
    assert canonical_digest(example()) == asdict_digest(example())


def test_digest_of_plain_json_values_ignores_key_order():
    assert canonical_digest({"a": 1, "b": [1, 2]}) == canonical_digest({"b": [1, 2], "a": 1})


def test_digest_changes_with_any_nested_value():
    assert canonical_digest(example("one")) != canonical_digest(example("two"))


def test_digest_refuses_values_json_cannot_hold():
    with pytest.raises(TypeError, match="set is not JSON serialisable"):
        canonical_digest({"a": {1, 2}})
