"""The analysis settings a researcher picks on the leaderboard page: a preset, and any
parameter of `analysis.runs.parameters.AnalysisParameters` changed from its default.

The form is built from the declared schema, so a parameter added there appears here with
its description, default, range and choices. A field left at its default takes the
preset's value; a field changed from it overrides the preset.
"""

import typing

from django import forms
from pydantic_core import PydanticUndefined

from analysis.runs.parameters import (
    PRESET_DESCRIPTIONS,
    PRESETS,
    AnalysisParameters,
    DeclaredInvalid,
    preset_parameters,
)
from evalhub.declared import declare_fields
from evalhub.nul_refusal import RefusesNul


class NumberListField(forms.CharField):
    """A list of numbers typed as "0.01, 0.05"; the schema checks each one."""

    def prepare_value(self, value):
        if isinstance(value, list | tuple):
            return ", ".join(str(v) for v in value)
        return value

    def to_python(self, value):
        text = super().to_python(value)
        if not text:
            return None
        try:
            return [float(part) for part in text.replace(";", ",").split(",") if part.strip()]
        except ValueError:
            raise forms.ValidationError("Give numbers separated by commas.") from None


def _default(info):
    if info.default is not PydanticUndefined:
        return info.default
    if info.default_factory is not None:
        return info.default_factory()
    return None


def _field_for(info) -> forms.Field:
    annotation = info.annotation
    default = _default(info)
    if typing.get_origin(annotation) in (list, tuple):
        return NumberListField(initial=default)
    if typing.get_origin(annotation) is typing.Literal:
        choices = [(value, value) for value in typing.get_args(annotation)]
        return forms.ChoiceField(choices=choices, initial=default)
    if annotation is bool:
        return forms.BooleanField(required=False, initial=default)
    if annotation is int:
        return forms.IntegerField(initial=default)
    if annotation is float:
        return forms.FloatField(initial=default)
    raise TypeError(f"no form field for {annotation!r}")


class AnalysisSettingsForm(RefusesNul, forms.Form):
    preset = forms.ChoiceField(
        choices=[(name, f"{name}: {PRESET_DESCRIPTIONS[name]}") for name in PRESETS],
        initial="defaults",
        required=False,
        widget=forms.RadioSelect,
        help_text="Parameters left at their default take the preset's value.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name, info in AnalysisParameters.model_fields.items():
            self.fields[name] = _field_for(info)
            # An unticked box is absent from the POST: it means "default", not an error.
            self.fields[name].required = False
        declare_fields(self.fields, AnalysisParameters)

    def parameters(self) -> dict:
        """The full, checked parameter set; call after is_valid()."""
        changed = {}
        for name, info in AnalysisParameters.model_fields.items():
            value = self.cleaned_data.get(name)
            if value is None or value == "":
                continue
            if value != _default(info):
                changed[name] = value
        try:
            return preset_parameters(self.cleaned_data.get("preset") or "defaults", changed)
        except DeclaredInvalid as invalid:
            for field, message in invalid.errors.items():
                self.add_error(field if field in self.fields else None, message)
            raise
