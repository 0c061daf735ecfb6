"""How a judge is asked, and how its reply becomes a payload: one module per task kind.

Each module (`ab`, `likert`, `abc_eval`, `spot_the_bot`, `comparative`, and `arena` for
an arena's battles, which is no campaign kind: judging/battles.py plays its kind) declares:

- `DEFAULT`: the text of the shipped rubric (`Rubric` "default", version 1 and later
  versions when the text changes; judging/defaults.py installs them);
- `placeholders(task, config)`: the values of the `$names` a rubric may use, made from what
  the kind's `item_context` gives the human page (`task`), so a judge sees exactly what a
  worker sees and never the item's hidden `meta` or gold;
- `ANSWER`: the JSON the judge must reply with (shown to it as `$answer_format`);
- `to_form(task, config, answer)`: the reply's JSON as the fields of the kind's HTML form.

The form then goes through the kind's own `parse_payload` (common.parse_reply), the same
`parse_answers` schema that checks humans' answers, so an automatic payload has exactly the
shape of a human one and the same mistakes are refused with the same messages.
"""

import importlib
from types import ModuleType

from annotation.kinds import KIND_CHOICES, KIND_KEYS

# Not "chat": a live chat needs a person talking; a judge rates the chats' conversations
# through the Likert, ABC-Eval, comparative or Spot The Bot campaigns built from them.
# "arena": an arena's battles (both sides' whole conversations), not a campaign kind.
ARENA_KIND = "arena"
RUBRIC_KINDS = ("ab", "likert", "abc_eval", "spot_the_bot", "comparative", ARENA_KIND)
# The campaign kind "arena" (an arena's paid crowd) shares the key; a judge of an arena
# judges its battles, so the rubric's own label is the one shown.
RUBRIC_KIND_CHOICES = [
    (key, label) for key, label in KIND_CHOICES if key in RUBRIC_KINDS and key != ARENA_KIND
] + [(ARENA_KIND, "Arena battle (pairwise, whole conversations)")]


def rubric_module(kind: str) -> ModuleType:
    if kind not in RUBRIC_KINDS:
        known = ", ".join(RUBRIC_KINDS)
        raise KeyError(f"No judge rubric for the task kind {kind!r}; judges answer: {known}")
    return importlib.import_module(f"judging.rubrics.{kind}")


def judgeable_kinds() -> list[str]:
    """The campaign kinds a judge can answer, in the kinds' own order (the campaign kind
    "arena", an arena's paid crowd, is judged through its arena's battles instead)."""
    return [key for key in KIND_KEYS if key in RUBRIC_KINDS and key != ARENA_KIND]


def rubric_kinds() -> list[str]:
    """What a rubric may be written for: the campaign kinds a judge answers, and arenas."""
    return [*judgeable_kinds(), ARENA_KIND]
