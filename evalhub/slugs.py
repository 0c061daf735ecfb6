"""Slugs: one rule for every page form and every API serializer, and proposals from names.

A slug is lowercase letters, digits and hyphens (it names an object in URLs and the API).
Model fields carry `validate_slug`, so model forms and model serializers check it without
repeating it; plain forms and serializers use `SlugFormField` / `validate_slug` directly.
"""

from django.core.validators import RegexValidator
from django.utils.text import slugify

SLUG_HELP = "Lowercase letters, digits and hyphens; used in URLs and the API."
SLUG_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"

validate_slug = RegexValidator(
    SLUG_PATTERN,
    "Use lowercase letters, digits and single hyphens between them (e.g. 'my-bot-2').",
    code="invalid_slug",
)


def propose_slug(model, name: str, max_length: int = 80) -> str:
    """slugify(name), made unique among `model`'s slugs by a numeric suffix ("-2", "-3"...)."""
    base = slugify(name)[:max_length].strip("-") or model._meta.model_name
    taken = set(model._default_manager.filter(slug__startswith=base).values_list("slug", flat=True))
    slug, n = base, 1
    while slug in taken:
        n += 1
        suffix = f"-{n}"
        slug = base[: max_length - len(suffix)].rstrip("-") + suffix
    return slug


class ProposedSlugForm:
    """Mixin for a ModelForm with a slug and a name: a blank slug becomes the name's,
    made unique (static/js/slug.js fills the same proposal in as the name is typed)."""

    slug_from = "name"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        field = self.fields["slug"]
        field.required = False
        if validate_slug not in field.validators:
            field.validators.append(validate_slug)
        field.help_text = SLUG_HELP + " Leave it blank to use one made from the name."
        field.widget.attrs["data-slug-from"] = f"id_{self.add_prefix(self.slug_from)}"

    def clean(self):
        cleaned = super().clean()
        name = cleaned.get(self.slug_from)
        if cleaned.get("slug") or "slug" in self.errors:
            return cleaned
        if self.instance.pk:  # editing: a blank slug keeps the one it has
            cleaned["slug"] = self.instance.slug
        elif name:
            cleaned["slug"] = propose_slug(self._meta.model, name)
        return cleaned
