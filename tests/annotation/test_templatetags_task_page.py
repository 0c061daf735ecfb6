"""The item page's pieces built once per kind (annotation/templatetags/task_page.py) are
what the template loop they replace rendered."""

import pytest
from django.template import engines

from annotation.kinds import KIND_KEYS, get_kind
from annotation.templatetags.task_page import shortcuts_line

# The loop templates/annotation/assignment.html had before the tag.
LOOP = (
    '{% if kind.shortcuts %}<p class="shortcuts">Keyboard: {% for key, what in kind.shortcuts %}'
    "<kbd>{{ key }}</kbd> {{ what }}{% if not forloop.last %} · {% endif %}{% endfor %}, "
    "<kbd>Enter</kbd> next.</p>{% endif %}"
)


def render(source: str, kind) -> str:
    return engines["django"].from_string(source).render({"kind": kind})


@pytest.mark.parametrize("key", KIND_KEYS)
def test_each_kinds_shortcuts_line_is_the_loops(key):
    kind = get_kind(key)
    tag = render("{% load task_page %}{% kind_shortcuts kind %}", kind)
    assert tag == render(LOOP, kind)
    assert ("<kbd>Enter</kbd> next." in tag) == bool(kind.shortcuts)


def test_the_line_escapes_the_keys_and_their_meaning_and_is_built_once():
    class Kind:
        shortcuts = [("<b>", "it's <i>bold</i>"), ("2", "two")]

    tag = render("{% load task_page %}{% kind_shortcuts kind %}", Kind())
    assert tag == render(LOOP, Kind())
    assert "<kbd>&lt;b&gt;</kbd> it&#x27;s &lt;i&gt;bold&lt;/i&gt; · <kbd>2</kbd> two" in tag
    assert shortcuts_line(tuple(map(tuple, Kind.shortcuts)), "en") is shortcuts_line(
        (("<b>", "it's <i>bold</i>"), ("2", "two")), "en"
    )


def test_a_kind_without_shortcuts_gets_nothing():
    class Kind:
        shortcuts = ()

    assert render("{% load task_page %}[{% kind_shortcuts kind %}]", Kind()) == "[]"
