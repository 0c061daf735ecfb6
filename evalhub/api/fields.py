"""Serializer fields every app's API shares."""

from rest_framework import serializers


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
