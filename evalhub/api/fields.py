"""Serializer fields every app's API shares."""

from django.core.exceptions import ObjectDoesNotExist
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers

from ..declared import DeclaredInvalid, check


class VisibleSlugRelatedField(serializers.SlugRelatedField):
    """A reference, by slug (or another unique field), to an object the request's user may
    see. Every writable reference of the API is one of these, so that a caller can neither
    use what is not theirs nor learn that it exists: an id that names nothing and an id that
    names something hidden from them get the same "No <noun> '<id>'." answer.

    `visible(user)` gives the rows `user` may see; by default the queryset's `visible_to`
    (evalhub/permissions.py's vocabulary). `queryset` names the model (for the schema)."""

    default_error_messages = {
        "does_not_exist": "No {noun} '{value}'.",
        "invalid": "Give the {noun}'s id as text.",
    }

    def __init__(self, *, noun: str, visible=None, **kwargs):
        self.noun = noun
        self.visible = visible
        super().__init__(**kwargs)

    def fail(self, key, **kwargs):
        kwargs.setdefault("noun", self.noun)
        super().fail(key, **kwargs)

    def get_queryset(self):
        request = self.context.get("request")
        user = getattr(request, "user", None)
        if self.visible is not None:
            return self.visible(user)
        return self.queryset.visible_to(user)

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, str | int):
            self.fail("invalid")
        data = str(data)
        try:
            return self.get_queryset().get(**{self.slug_field: data})
        except (ObjectDoesNotExist, DjangoValidationError, TypeError, ValueError):
            # A malformed id (not a UUID, say) names nothing either.
            self.fail("does_not_exist", value=data)


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
