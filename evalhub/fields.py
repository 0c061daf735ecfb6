"""Model fields shared by every app."""

from django.core.validators import MaxLengthValidator
from django.db import models


def bounded_text(limit: int, **options) -> models.TextField:
    """A TextField of at most `limit` characters (a constant of evalhub/limits.py).

    Django's TextField passes `max_length` to its form field and DRF's ModelSerializer to
    its CharField, but the model's own validation (`full_clean`) ignores it: the validator
    makes every entry point refuse a longer text, with the same message."""
    return models.TextField(max_length=limit, validators=[MaxLengthValidator(limit)], **options)
