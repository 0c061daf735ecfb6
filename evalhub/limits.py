"""The longest text a user may store in each kind of field, declared once.

The models' fields carry these limits (`evalhub.fields.bounded_text` for text fields,
`max_length` for the others), so their forms and the API's ModelSerializers inherit them;
the hand-written serializers and forms, the upload parsers and the chat read the same
constants. The documentation's limits page is `reference_markdown()` (rendered by
docs/hooks.py), so the page cannot drift from the code.

Plain numbers, no Django: the settings schema (evalhub/config.py) and the documentation
build import this module too.
"""

from __future__ import annotations

NAME_CHARS = 200
DESCRIPTION_CHARS = 5_000
INSTRUCTIONS_CHARS = 20_000
SYSTEM_PROMPT_CHARS = 4_000
REASON_CHARS = 2_000
TEXT_CHARS = 20_000

# Where each limit applies, for the documentation (the order is the page's).
APPLIES_TO = {
    "NAME_CHARS": "names and titles: systems, prompt sets, tournaments, partner sets, "
    "campaigns, judges",
    "DESCRIPTION_CHARS": "descriptions: systems, prompt sets, tournaments, partner sets",
    "INSTRUCTIONS_CHARS": "instructions: a campaign's (shown to crowdworkers), a rubric's "
    "(sent to judges)",
    "SYSTEM_PROMPT_CHARS": "a bot endpoint's system prompt",
    "REASON_CHARS": "reasons staff give: blocking a worker, declining a launch, rejecting "
    "a submission",
    "TEXT_CHARS": "one response, prompt utterance or conversation turn, uploaded or "
    "collected (a bot's reply is cut at `EVALHUB_BOT_MAX_REPLY_CHARS`, at most this; a chat "
    "campaign's `max_message_chars`, at most 2,000, bounds what a worker types)",
}


def reference_markdown() -> str:
    """The table of the text limits, for the documentation's limits page."""
    lines = [
        "| Limit | Characters | Applies to |",
        "|---|---|---|",
    ]
    for name, where in APPLIES_TO.items():
        lines.append(f"| `{name}` | {globals()[name]:,} | {where} |")
    return "\n".join(lines)
