"""The analysis settings form is built from the declared parameters, lists included."""

from analysis.pages.settings_form import AnalysisSettingsForm
from analysis.runs.parameters import DEFAULT_PARAMETERS


def test_a_list_parameter_is_typed_as_numbers_separated_by_commas():
    form = AnalysisSettingsForm(data={"preset": "defaults", "significance_levels": "0.01, 0.2"})
    assert form.is_valid(), form.errors
    assert form.parameters()["significance_levels"] == [0.01, 0.2]


def test_a_list_left_empty_keeps_its_default():
    form = AnalysisSettingsForm(data={"preset": "defaults"})
    assert form.is_valid(), form.errors
    assert form.parameters()["significance_levels"] == DEFAULT_PARAMETERS["significance_levels"]


def test_a_list_that_is_not_numbers_is_refused_next_to_its_field():
    form = AnalysisSettingsForm(data={"preset": "defaults", "significance_levels": "a, b"})
    assert not form.is_valid()
    assert form.errors["significance_levels"] == ["Give numbers separated by commas."]
