"""Serializer fields every app's API shares."""

from rest_framework import serializers

from ..declared import DeclaredInvalid, check


def refuse_nul(field: serializers.Field, value) -> None:
    """A NUL character names nothing: PostgreSQL text cannot hold one, and looking it up
    raises a database error (a 500) instead of "not found"; refuse it as not found."""
    if isinstance(value, str) and "\x00" in value:
        shown = value.replace("\x00", "\\0")
        # Each field's "does_not_exist" message names what it needs of these.
        field.fail("does_not_exist", slug_name="slug", value=shown, slug=shown)


class SlugLookupField(serializers.SlugRelatedField):
    """A related object by slug (or another unique text field), for writable API fields."""

    def to_internal_value(self, data):
        refuse_nul(self, data)
        return super().to_internal_value(data)


class DeclaredField(serializers.DictField):
    """A declared config (evalhub/declared.py) as one field of a request: checked against
    its schema, so that each wrong key is reported as "<field>.<key>" in the one error shape
    (a wrong config as a whole as the field itself). The value is what was given; the
    service fills in the defaults."""

    def __init__(self, schema, **kwargs):
        self.schema = schema
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        try:
            check(self.schema, value)
        except DeclaredInvalid as invalid:
            whole = [m for key, m in invalid.errors.items() if not key]
            raise serializers.ValidationError(
                whole or {key: [m] for key, m in invalid.errors.items()}
            ) from None
        return value
