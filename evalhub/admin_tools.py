"""Building blocks shared by the apps' admin pages: the admin classes every app's admin
derives from (their forms refuse a NUL as every form does, evalhub/nul_refusal.py),
read-only records and JSON shown readably.

Every app registers its own models in its own `admin.py`; what they share lives here, in
the catalog, which every app may import.
"""

import json

from django import forms
from django.contrib import admin
from django.utils.html import format_html

from .nul_refusal import RefusesNul


class ModelForm(RefusesNul, forms.ModelForm):
    """The admin's default form (Django's is a plain ModelForm)."""


class ModelAdmin(admin.ModelAdmin):
    form = ModelForm


class TabularInline(admin.TabularInline):
    form = ModelForm


def pretty_json(value) -> str:
    """A JSON value as an indented block, escaped (payloads hold worker-typed text)."""
    if value is None:
        return "-"
    text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)
    return format_html('<pre style="white-space: pre-wrap; margin: 0">{}</pre>', text)


class RecordAdmin(ModelAdmin):
    """A model whose rows are records written by the platform's own services: staff may
    look at them, search and filter them, but never add, change or delete one here.

    Each subclass says in its docstring which invariant an edit would break.
    """

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
