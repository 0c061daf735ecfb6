import hashlib
import json
from dataclasses import asdict, dataclass

import numpy as np
import pytest
import trueskill

from analysis.reports.common import Matches, canonical_digest, category_codes, ranking_section
from analysis.reports.data import ABData
from analysis.runs.parameters import PRESETS, normalize_parameters
from evalstats import pairwise as pw
from evalstats import trueskill as ts


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


@dataclass(frozen=True)
class Columns:
    ids: object
    names: object
    flags: object
    matrix: object
    turns: object


TUPLES = Columns(
    ids=(3, 1, 2),
    names=("bot-a", "human", "b"),
    flags=(True, False, True),
    matrix=((1, 0, -1), (0, 0, 1), (-1, 1, 0)),
    turns=(None, 2, 7),
)


def test_digest_of_arrays_is_the_digest_of_the_tuples_they_hold():
    arrays = Columns(
        ids=np.array(TUPLES.ids, dtype=np.int64),
        names=np.array(TUPLES.names, dtype=str),
        flags=np.array(TUPLES.flags, dtype=bool),
        matrix=np.array(TUPLES.matrix, dtype=np.int8),
        turns=np.array(TUPLES.turns, dtype=object),
    )
    assert canonical_digest(arrays) == canonical_digest(TUPLES)


def test_digest_of_an_input_dataclass_is_the_digest_of_the_tuples_it_was_given():
    columns = {
        "item": (1, 1, 2),
        "worker": (4, 5, -1),
        "system_a": ("x", "x", "y"),
        "system_b": ("y", "y", "z"),
        "choice": ("a", "tie", "tie"),
        "automatic": (False, False, True),
    }
    data = ABData(subject="t", automatic_weight=2, **columns)
    as_tuples = {"subject": "t", "automatic_weight": 2, "kind": "ab", **columns}
    assert canonical_digest(data) == canonical_digest(as_tuples)


def test_digest_of_a_numpy_scalar_is_the_digest_of_its_python_value():
    assert canonical_digest({"n": np.int64(3)}) == canonical_digest({"n": 3})


def test_category_codes_give_each_value_its_code():
    values = np.array(["tie", "a", "b", "a"])
    assert category_codes(values, {"a": 0, "b": 1, "tie": 2}).tolist() == [2, 0, 1, 0]


def test_category_codes_refuse_a_value_without_a_code():
    with pytest.raises(KeyError, match="maybe"):
        category_codes(np.array(["a", "maybe"]), {"a": 0, "b": 1})


def package_mean_mu(matches, orders) -> list[float]:
    """Reference: the released Spot The Bot code's TrueSkill passes, run with the trueskill
    package's global environment (ratings from mu=0, sigma=0.5), averaged over the orders."""
    trueskill.setup()
    mus = []
    for order in orders:
        ratings = [trueskill.Rating(mu=0.0, sigma=0.5) for _ in matches.names]
        for m in order:
            i, j, result = matches.a[m], matches.b[m], matches.outcome[m]
            if result == pw.B_WINS:
                ratings[j], ratings[i] = trueskill.rate_1vs1(ratings[j], ratings[i])
            else:
                drawn = bool(result == pw.TIE)
                ratings[i], ratings[j] = trueskill.rate_1vs1(ratings[i], ratings[j], drawn=drawn)
        mus.append([r.mu for r in ratings])
    return list(np.mean(mus, axis=0))


def three_systems() -> Matches:
    """120 random matches among three systems, a fifth of them ties."""
    rng = np.random.default_rng(4)
    a = rng.integers(0, 3, 120)
    b = (a + rng.integers(1, 3, 120)) % 3
    outcome = rng.choice([pw.A_WINS, pw.B_WINS, pw.TIE], size=120, p=[0.5, 0.3, 0.2])
    return Matches(["x", "y", "z"], a, b, outcome, np.arange(120))


def test_the_released_code_setting_ranks_as_the_released_code_ran_trueskill():
    matches = three_systems()
    params = normalize_parameters({"trueskill": "released-code", "replicates": 5, "seed": 9})

    order, _, ranking, _ = ranking_section(matches, params, [])

    # Shuffled, never resampled: each replicate rates every match exactly once.
    orders = ts.bootstrap_match_indices(120, 5, seed=9, resample=False)
    expected = dict(zip(matches.names, package_mean_mu(matches, orders), strict=True))
    assert [row["system"] for row in ranking] == order
    for row in ranking:
        assert row["mu"] == pytest.approx(expected[row["system"]], abs=1e-9)


def test_the_intended_setting_differs_from_the_released_one():
    matches = three_systems()
    mu = {}
    for setting in ("intended", "released-code"):
        params = normalize_parameters({"trueskill": setting, "replicates": 5, "seed": 9})
        mu[setting] = [row["mu"] for row in ranking_section(matches, params, [])[2]]

    assert mu["intended"] != pytest.approx(mu["released-code"])


def test_the_published_preset_runs_trueskill_as_the_released_code_did():
    assert PRESETS["as-published"]["trueskill"] == "released-code"
    assert normalize_parameters(None)["trueskill"] == "intended"
