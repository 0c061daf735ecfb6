"""Pieces of the item page (templates/annotation/assignment.html) that are the same on
every page of a kind, built once instead of on every render.

- ``{% kind_shortcuts kind %}``: the keyboard shortcuts line of the instructions, "" for a
  kind without shortcuts. A template loop of a dozen nodes rendered it on every page, a
  tenth of the page's rendering (bench/profile_serving.py); a kind's shortcuts are fixed
  for each language (their texts are msgids, translated here).
"""

from functools import lru_cache

from django import template
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import get_language, gettext, pgettext

register = template.Library()


@lru_cache(maxsize=64)
def shortcuts_line(shortcuts: tuple[tuple[str, str], ...], language: str | None) -> SafeString:
    """The line in `language`, the active one (an argument so that the cache keeps one
    line per language)."""
    if not shortcuts:
        return SafeString("")
    keys = format_html_join(" · ", "<kbd>{}</kbd> {}", ((k, gettext(t)) for k, t in shortcuts))
    line = gettext("Keyboard: %(keys)s, %(enter)s next.")
    enter = format_html("<kbd>{}</kbd>", pgettext("keyboard key", "Enter"))
    return format_html(
        '<p class="shortcuts">{}</p>', SafeString(line % {"keys": keys, "enter": enter})
    )


@register.simple_tag
def kind_shortcuts(kind) -> SafeString:
    return shortcuts_line(tuple(tuple(pair) for pair in kind.shortcuts), get_language())
