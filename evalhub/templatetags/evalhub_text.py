"""Text filters of the catalog's pages.

- ``{{ text|highlight:q }}``: the text, escaped, with every case-insensitive occurrence of
  `q` in ``<mark>``, as the comparison page's filter matched it (the whole phrase).
"""

import re

from django import template
from django.utils.html import escape
from django.utils.safestring import mark_safe

register = template.Library()


@register.filter
def highlight(text, q) -> str:
    text = "" if text is None else str(text)
    q = (q or "").strip()
    if not q:
        return escape(text)
    parts = re.split(f"({re.escape(q)})", text, flags=re.IGNORECASE)
    # Odd parts are the matches; every part is escaped before it is marked.
    return mark_safe(
        "".join(f"<mark>{escape(p)}</mark>" if i % 2 else escape(p) for i, p in enumerate(parts))
    )
