"""Two requests creating the same slug at once: the second gets a user error, not a 500.

Forms and serializers check that a slug is free, but two requests can both pass that
check before either commits; the database's unique constraint then stops the second with
an IntegrityError. ``unique_slug`` turns exactly that case into ``SlugTaken`` (any other
integrity error is re-raised), for the caller to show as a field error (400).
"""

from contextlib import contextmanager

from django.db import IntegrityError, transaction


class SlugTaken(Exception):
    field = "slug"

    def __init__(self, model, slug: str):
        name = model._meta.verbose_name
        super().__init__(f"A {name} with the slug '{slug}' already exists; choose another.")


@contextmanager
def unique_slug(model, slug: str):
    """Run the block in a transaction; SlugTaken if it collided with ``model``'s ``slug``."""
    try:
        with transaction.atomic():
            yield
    except IntegrityError:
        if slug and model._default_manager.filter(slug=slug).exists():
            raise SlugTaken(model, slug) from None
        raise
