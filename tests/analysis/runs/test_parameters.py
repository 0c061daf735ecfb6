"""The analysis parameters are a declared schema: unknown names, wrong types and values
out of range are refused with a message naming the parameter; defaults fill the rest."""

import pytest

from analysis.runs.parameters import (
    DEFAULT_PARAMETERS,
    AnalysisParameters,
    normalize_parameters,
    parameter_rows,
)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (
            {"replicate": 5},
            "'replicate' is an unknown analysis parameter; allowed: exclude_blocked",
        ),
        ({"seed": "x"}, "seed must be a whole number, got 'x'"),
        ({"replicates": 2.5}, "replicates must be a whole number"),
        ({"leave_one_out": "yes"}, "leave_one_out must be true or false, got 'yes'"),
        ({"replicates": 0}, "replicates must be from 1 to 100000, got 0"),
        ({"replicates": 100_001}, "replicates must be from 1 to 100000, got 100001"),
        ({"seed": -1}, "seed must be from 0 to 4294967295, got -1"),
        ({"coverage": 1}, "coverage must be between 0 and 1 (exclusive), got 1"),
        ({"stability_points": 51}, "stability_points must be from 1 to 50"),
        ({"correction": "fdr"}, "correction must be one of 'holm', 'bonferroni' or 'none'"),
        (
            {"pair_test": "t"},
            "pair_test must be one of 'binomial', 'chi-square' or 'chi-square-2x2'",
        ),
    ],
)
def test_bad_parameters_are_refused_with_a_message(given, message):
    with pytest.raises(ValueError) as raised:
        normalize_parameters(given)
    assert message in str(raised.value)


def test_defaults_fill_what_is_left_out():
    params = normalize_parameters({"seed": 7, "correction": "none"})
    assert params == {**DEFAULT_PARAMETERS, "seed": 7, "correction": "none"}
    assert DEFAULT_PARAMETERS["replicates"] == 1000 and DEFAULT_PARAMETERS["coverage"] == 0.95
    assert set(params) == set(AnalysisParameters.model_fields)


def test_a_normalized_set_is_normalized_again_unchanged():
    # A run stores its normalized parameters, and the digest of a re-request must match.
    params = normalize_parameters({"coverage": 0.9, "leave_one_out": True})
    assert normalize_parameters(params) == params


def test_every_number_has_a_range_and_every_parameter_a_description():
    rows = {row["name"]: row for row in parameter_rows()}
    assert set(rows) == set(DEFAULT_PARAMETERS)
    for name, row in rows.items():
        assert row["description"], name
        if isinstance(DEFAULT_PARAMETERS[name], int | float) and not isinstance(
            DEFAULT_PARAMETERS[name], bool
        ):
            assert row["range"], name


def test_significance_levels_lie_between_0_and_1_and_come_sorted():
    from analysis.runs.parameters import normalize_parameters

    assert normalize_parameters({"significance_levels": [0.1, 0.01, 0.1]})[
        "significance_levels"
    ] == [0.01, 0.1]
    with pytest.raises(ValueError, match="significance_levels"):
        normalize_parameters({"significance_levels": [0.05, 1.5]})
    with pytest.raises(ValueError, match="annotations"):
        normalize_parameters({"annotations": "last"})
