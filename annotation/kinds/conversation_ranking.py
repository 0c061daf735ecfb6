"""K-way rankings of whole conversations: k conversations of different systems that are
comparable (the same prompt or persona, the same tournament round); the worker ranks them
from best to worst, with ties when the config allows them. The page, the validation, the
payload and the analysis (Plackett-Luce) are the ranking of responses'
(`annotation.kinds.ranking`); only the items differ.

Items (`build_items`). Conversations are grouped by the config's `group_by`: `"domain"`
(the catalog's domain, which the comparative kind pairs by too) or the name of a key of the
conversation's metadata (`"persona"`, `"round"`): conversations with equal values are
comparable, those without the key are left out. A conversation is ranked for its one bot
speaker's system (as Spot The Bot rates one chatbot per side); one with no bot or several
is left out, as its rank would belong to no single system. Within a group, each system's
conversations are shuffled with the seeded `rng` and dealt out in rounds: item j shows the
j-th conversation of every system that has one, so each conversation is ranked in exactly
one item, and an item showing fewer than two is not made. A group of more than
`MAX_SYSTEMS` systems is refused. The shown order is random per item. Every shown
conversation is linked to the item (`Item.shown_conversations`) so that the owner of any of
its systems never ranks it.

Config: `allow_ties`, `group_by`, `human_name`, `bot_name` (how the page names speakers:
by role only, as the comparative kind does).

Content: `{"conversations": [[{"speaker", "name", "text"}, ...], ...], "meta":
{"group", "conversations": [external id, ...], "systems": [[slug], ...]}}`, in shown order.
Payload: `{"ranks": [...]}`, as for responses.

Export (`export_row`), one row per judgment: the ranking of responses' row with `group`
and `conversations` (the external ids in shown order) in place of `prompt`.
"""

import json
from collections import defaultdict
from typing import ClassVar

from django.utils.translation import gettext_noop
from pydantic import Field, field_validator

from .base import ConfigInvalid, ItemSpec
from .comparative import _bots, _dialogue, _named
from .ranking import MAX_SYSTEMS, RankingConfig, RankingKinds

DOMAIN = "domain"


class ConversationRankingConfig(RankingConfig):
    """A conversation ranking campaign's config."""

    noun: ClassVar[str] = "conversation ranking config key"

    group_by: str = Field(
        DOMAIN,
        min_length=1,
        max_length=100,
        description="What makes conversations comparable: 'domain' (the same prompt or "
        "persona, as the catalog's domain), or a key of the conversations' metadata (e.g. "
        "'persona', 'round'); conversations with equal values are ranked together.",
    )
    human_name: str = Field("Human", description="How the page names a person.")
    bot_name: str = Field("Chatbot", description="How the page names a chatbot.")

    @field_validator("group_by", "human_name", "bot_name")
    @classmethod
    def _named(cls, name: str, info) -> str:
        if not name.strip():
            raise ValueError(f"{info.field_name} must be a non-empty name.")
        return name


def _group(conversation, group_by: str) -> str | None:
    """The conversation's group label, or None when it has no value to group by."""
    if group_by == DOMAIN:
        return conversation.domain
    metadata = conversation.metadata if isinstance(conversation.metadata, dict) else {}
    value = metadata.get(group_by)
    if value is None:
        return None
    # Metadata values may be numbers or lists: the label is their JSON text.
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def build_items(conversations, config: dict, rng) -> list[ItemSpec]:
    """Item specs ranking comparable `conversations` (speakers__system and turns
    prefetched) of different systems."""
    groups: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for conversation in conversations:
        bots = _bots(conversation)
        label = _group(conversation, config["group_by"])
        if len(bots) == 1 and label is not None:
            groups[label][bots[0]].append(conversation)
    specs = []
    for label in sorted(groups):
        by_system = groups[label]
        if len(by_system) > MAX_SYSTEMS:
            raise ConfigInvalid(
                f"A ranking shows at most {MAX_SYSTEMS} conversations, but group {label!r} "
                f"has {len(by_system)} systems: group the conversations more finely."
            )
        queues = []
        for system in sorted(by_system):
            members = sorted(by_system[system], key=lambda c: c.external_id)
            rng.shuffle(members)
            queues.append((system, members))
        for turn in range(max(len(members) for _, members in queues)):
            shown = [(system, members[turn]) for system, members in queues if turn < len(members)]
            if len(shown) < 2:
                continue
            rng.shuffle(shown)
            specs.append(
                ItemSpec(
                    content={
                        "conversations": [_dialogue(c, config) for _, c in shown],
                        "meta": {
                            "group": label,
                            "conversations": [c.external_id for _, c in shown],
                            "systems": [[system] for system, _ in shown],
                        },
                    },
                    shown_conversation_ids=tuple(c.pk for _, c in shown),
                )
            )
    return specs


class ConversationRankingKind(RankingKinds):
    key = "conversation_ranking"
    label = "K-way ranking of conversations"
    shortcuts = (
        ("Tab", gettext_noop("focus a conversation")),
        ("1-9, 0", gettext_noop("give it that rank (0 is rank 10)")),
        ("↑ ↓", gettext_noop("move it up or down")),
    )
    config_schema = ConversationRankingConfig
    noun = "conversation"
    shown_key = "conversations"

    def entry(self, shown) -> dict:
        return {"turns": _named(shown)}

    def build_from_conversations(self, conversations, config, rng) -> list[ItemSpec]:
        return build_items(conversations, self.clean_config(config), rng)

    def export_meta(self, meta: dict) -> dict:
        return {"group": meta["group"], "conversations": meta["conversations"]}


KIND = ConversationRankingKind()
