"""NUL (U+0000) in text from outside: refused when people send it, dropped when models do.

PostgreSQL's text and jsonb cannot hold a NUL character (SQLite can), so a NUL that gets as
far as a query is a 500 there, whatever the query was for: storing a chat message, looking
up a slug, storing a judge's answer nested in a JSON payload. Every boundary where outside
text enters stops it once, with the functions below:

- What people send (a URL, a form, an API request body, an uploaded file) is **refused**
  with an error naming where the NUL is (`find_nul`, `nul_refused`). A NUL in typed or
  uploaded text is a mistake (binary pasted, a file in the wrong encoding) or a probe; the
  person can see it and send the text again, and what they meant is never silently changed
  (Django's own form fields and DRF's refuse it too, so every input answers alike).
- What models answer (a bot's turn, a judge's reply and the JSON in it) is **cleaned**
  (`without_nul`). A bot or a judge cannot be asked to fix it, refusing its reply would
  stall the conversation, the collection or the judge run that waits for it, and a NUL
  means nothing in text: the reply is kept without it.

Where each is applied: docs/security.md ("NUL characters").
"""

from collections.abc import Mapping

NUL = "\x00"


def _holds_nul(value) -> bool:
    return isinstance(value, str) and NUL in value


def find_nul(value, where: str = "") -> str | None:
    """Where the first NUL of `value` sits, or None: `where` for a string holding one, else
    its place inside lists and mappings (keys included) as "where.key.0". Walks with a stack,
    not recursion, so a value nested however deep cannot break the walk."""
    stack = [(where, value)]
    while stack:
        place, item = stack.pop()
        if _holds_nul(item):
            return place
        if isinstance(item, Mapping):
            for key, child in reversed(list(item.items())):
                inner = f"{place}.{key}" if place else str(key)
                if _holds_nul(key):
                    return inner
                stack.append((inner, child))
        elif isinstance(item, list | tuple):
            stack.extend(
                (f"{place}.{n}" if place else str(n), child)
                for n, child in reversed(list(enumerate(item)))
            )
    return None


def shown(text: str) -> str:
    """`text` with each NUL written as \\0, to quote it in a message."""
    return text.replace(NUL, "\\0")


def nul_refused(where: str = "", *, subject: str = "The value") -> str:
    """The message for a NUL in what a person sent: at `where` (a field, a parameter, a
    place inside a JSON value), quoted, or in the `subject` named."""
    subject = f"'{shown(where)}'" if where else subject
    return (
        f"{subject} holds a NUL character (\\0 or \\u0000), which cannot be stored; "
        "remove it and send it again."
    )


def without_nul(value):
    """`value` with every NUL removed: from a string, or from each string and key of a JSON
    value (lists and dicts, nested). For what a model answered; other values pass as they
    are. Rebuilt with a stack, not recursion, like `find_nul`."""
    if isinstance(value, str):
        return value.replace(NUL, "")
    if find_nul(value) is None:
        return value
    return _rebuilt(value)


def _rebuilt(value):
    """A copy of the JSON value `value` (tuples become lists, as in JSON) with the NULs of
    its strings and keys removed."""
    root: list = [None]
    # (the container to fill, the key or index in it, the value to copy there)
    stack = [(root, 0, value)]
    while stack:
        target, slot, item = stack.pop()
        if isinstance(item, str):
            target[slot] = item.replace(NUL, "")
        elif isinstance(item, Mapping):
            copy = {}
            target[slot] = copy
            for key, child in item.items():
                key = key.replace(NUL, "") if isinstance(key, str) else key
                copy[key] = None  # keeps the keys in their order
                stack.append((copy, key, child))
        elif isinstance(item, list | tuple):
            copy = [None] * len(item)
            target[slot] = copy
            stack.extend((copy, n, child) for n, child in enumerate(item))
        else:
            target[slot] = item
    return root[0]
