"""Declared settings: pydantic models that say, once, which keys a config may hold.

Task-kind configs, tournament settings, campaign settings and analysis parameters are each
a `Declared` model: an unknown key is refused with a message naming it and the allowed
ones, every value's type is checked strictly (JSON `"3"` is not the number 3, `true` is not
1), every number has a minimum and a maximum, and each field's description and default are
what the forms and the API show. `check` validates a mapping and returns it with the
defaults filled in; `describe` lists the fields for a page.
"""

import json
from collections.abc import Mapping
from typing import Any, ClassVar

from annotated_types import Ge, Gt, Le, Lt
from django import forms
from django.core.exceptions import ValidationError as FieldInvalid
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils.deconstruct import deconstructible
from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from .errors import UserInputError, field_problems

_TYPE_WORDS = {
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "decimal_type": "a number",
    "decimal_parsing": "a number",
    "string_type": "text",
    "bool_type": "true or false",
    "list_type": "a list",
    "tuple_type": "a list",
    "dict_type": "an object",
    "model_type": "an object",
}


class Declared(BaseModel):
    """Base of every declared config. `noun` names one key in messages ("Likert config
    key"); `messages` replaces the generic type and range message of a field."""

    model_config = ConfigDict(extra="forbid", strict=True)

    noun: ClassVar[str] = "setting"
    messages: ClassVar[dict[str, str]] = {}


class DeclaredInvalid(UserInputError, ValueError):
    """{field: message} for a config that does not fit its schema; "" is the whole config.

    A user-input error like any other: the API answers it as a 400 in the one error shape
    and pages show it with `show_on_page`, with no translation at the call site. Still a
    ValueError for the callers that check a value (a model field's validator)."""

    def __init__(self, errors: dict[str, str]):
        self.errors = errors
        super().__init__(field_problems(errors), summary=" ".join(errors.values()))


def bounds(info: FieldInfo) -> tuple[Any, Any]:
    """(minimum, maximum) of a numeric field, None where unbounded."""
    low = high = None
    for item in info.metadata:
        if isinstance(item, Ge | Gt):
            low = getattr(item, "ge", None) if isinstance(item, Ge) else item.gt
        if isinstance(item, Le | Lt):
            high = getattr(item, "le", None) if isinstance(item, Le) else item.lt
    return low, high


def range_text(info: FieldInfo) -> str:
    low, high = bounds(info)
    exclusive = any(isinstance(m, Gt | Lt) for m in info.metadata)
    if low is None and high is None:
        return ""
    if exclusive:
        return f"between {low} and {high} (exclusive)"
    return f"from {low} to {high}"


def _where(loc: tuple) -> str:
    text = str(loc[0]) if loc else ""
    for part in loc[1:]:
        text += f"[{part + 1}]" if isinstance(part, int) else f".{part}"
    return text


def _message(schema: type[Declared], error: dict) -> str:
    loc, kind, given = error["loc"], error["type"], error.get("input")
    field = str(loc[0]) if loc else ""
    where = _where(loc)
    if kind == "extra_forbidden" and len(loc) == 1:
        allowed = ", ".join(schema.model_fields) or "none, leave it {}"
        return f"{field!r} is an unknown {schema.noun}; allowed: {allowed}."
    if kind == "value_error":
        return str(error["ctx"]["error"])
    if field in schema.messages:
        return schema.messages[field]
    if kind == "extra_forbidden":
        return f"{where}: {loc[-1]!r} is not a known key."
    if kind == "missing":
        return f"{where} is required."
    if kind in _TYPE_WORDS:
        return f"{where} must be {_TYPE_WORDS[kind]}, got {given!r}."
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        info = schema.model_fields.get(field)
        span = range_text(info) if info is not None and len(loc) == 1 else ""
        if not span:
            bound = next(iter(error["ctx"].values()))
            span = {
                "greater_than": f"more than {bound}",
                "greater_than_equal": f"at least {bound}",
                "less_than": f"less than {bound}",
                "less_than_equal": f"at most {bound}",
            }[kind]
        return f"{where} must be {span}, got {given!r}."
    if kind == "literal_error":
        expected = error["ctx"]["expected"]
        one_of = "one of " if expected.count("'") > 4 else ""
        return f"{where} must be {one_of}{expected}, not {given!r}."
    if kind in ("too_short", "too_long"):
        ctx = error.get("ctx", {})
        limit = ctx.get("min_length", ctx.get("max_length"))
        word = "at least" if kind == "too_short" else "at most"
        return f"{where} must have {word} {limit} entries."
    return f"{where}: {error['msg']}."


def check(schema: type[Declared], data: Mapping | None) -> dict:
    """`data` validated against `schema`, defaults filled in, as plain JSON-ready values.

    Raises DeclaredInvalid({field: message}) naming every problem."""
    if data is not None and not isinstance(data, Mapping):
        raise DeclaredInvalid({"": f"The {schema.noun}s must be an object {{key: value}}."})
    try:
        model = schema.model_validate(dict(data or {}))
    except ValidationError as invalid:
        errors: dict[str, str] = {}
        for error in invalid.errors():
            field = str(error["loc"][0]) if error["loc"] else ""
            message = _message(schema, error)
            if message not in errors.get(field, ""):
                errors[field] = f"{errors[field]} {message}" if field in errors else message
        raise DeclaredInvalid(errors) from None
    return model.model_dump(mode="json")


def describe(schema: type[Declared]) -> list[dict]:
    """One row per field for the pages and docs: name, description, default, range, choices."""
    rows = []
    for name, info in schema.model_fields.items():
        if info.default is not PydanticUndefined:
            default = info.default
        elif info.default_factory is not None:
            default = info.default_factory()
        else:
            default = None
        rows.append(
            {
                "name": name,
                "description": info.description or "",
                "required": info.is_required(),
                "default": json.dumps(default, default=str),
                "range": range_text(info),
            }
        )
    return rows


def help_text(schema: type[Declared], name: str) -> str:
    """A form field's help: the schema's description, default and range."""
    info = schema.model_fields[name]
    parts = [info.description or ""]
    span = range_text(info)
    if span:
        parts.append(f"Range {span}.")
    if not info.is_required():
        default = info.default if info.default_factory is None else info.default_factory()
        shown = ", ".join(map(str, default)) if isinstance(default, list) else default
        parts.append(f"Default {shown}.")
    return " ".join(p for p in parts if p)


def declare_fields(form_fields: dict, schema: type[Declared]) -> None:
    """Give the form fields of a schema's settings its help (description, default, range)
    and its minimum and maximum, so that the page shows them and the form enforces them."""
    for name, info in schema.model_fields.items():
        field = form_fields.get(name)
        if field is None:
            continue
        field.help_text = help_text(schema, name)
        if not isinstance(field, forms.IntegerField | forms.FloatField | forms.DecimalField):
            continue
        low, high = bounds(info)
        # A model form's field already holds the model field's InRange: one message is enough.
        has_range = any(isinstance(v, InRange) for v in field.validators)
        for limit, validator, attr in (
            (low, MinValueValidator, "min"),
            (high, MaxValueValidator, "max"),
        ):
            if limit is None:
                continue
            if not has_range and not any(
                isinstance(v, validator) and v.limit_value == limit for v in field.validators
            ):
                field.validators.append(validator(limit))
            field.widget.attrs[attr] = limit


@deconstructible
class InRange:
    """A model field's validator for the range a schema declares, naming the field."""

    def __init__(self, field: str, low, high):
        self.field, self.low, self.high = field, low, high

    def __call__(self, value):
        if value is None:
            return
        if (self.low is not None and value < self.low) or (
            self.high is not None and value > self.high
        ):
            raise FieldInvalid(
                f"{self.field} must be from {self.low} to {self.high}, got {value}.",
                code="out_of_range",
            )

    def __eq__(self, other):
        return isinstance(other, InRange) and (self.field, self.low, self.high) == (
            other.field,
            other.low,
            other.high,
        )


def range_validators(schema: type[Declared], name: str, field: str | None = None) -> list:
    """The validators of a model field holding the schema's setting `name`."""
    low, high = bounds(schema.model_fields[name])
    return [InRange(field or name, low, high)]


def declared_field(field_class, schema: type[Declared], name: str, verbose_name=None):
    """A model field holding the schema's setting `name`: its default, range validators
    and description come from the schema, declared once."""
    info = schema.model_fields[name]
    return field_class(
        verbose_name,
        default=info.default,
        validators=range_validators(schema, name),
        help_text=info.description,
    )


def range_constraint(
    schema: type[Declared], name: str, *, prefix: str, field: str | None = None
) -> models.CheckConstraint:
    """A database check that the model field `field` (default: `name`) holds a value in the
    range the schema declares for `name`; NULL passes (a nullable field means "not set")."""
    column = field or name
    low, high = bounds(schema.model_fields[name])
    condition = Q(**{f"{column}__gte": low}) & Q(**{f"{column}__lte": high})
    if schema.model_fields[name].default is None:
        condition = Q(**{f"{column}__isnull": True}) | condition
    return models.CheckConstraint(
        condition=condition,
        name=f"{prefix}_{column}_range",
        violation_error_message=f"{column} must be from {low} to {high}.",
    )
