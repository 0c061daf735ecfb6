"""K-way rankings: a context and the responses of k systems; the worker ranks them from best
to worst, with ties when the campaign's config allows them. Analysed with Plackett-Luce
(`evalstats.plackett_luce`), of which A/B's pairwise judgments are the k = 2 case.

Items. Built from responses, like A/B: for each prompt of the prompt set, the responses of
the campaign's system and of every baseline (k = 1 + the baselines, at most `MAX_SYSTEMS`).
Identical responses (up to whitespace) are shown once and share the rank given to it, so a
worker is never asked to order two copies of one text; when every response is the same,
the item is stored with an automatic tie and never shown. The order in which the responses
are shown is random per item (the seeded `rng`), so that position bias can be analysed;
which systems wrote each shown response lives in `content["meta"]["systems"]`, which
`item_context` never passes on. Every shown response is linked to the item
(`Item.shown_responses`) so that a system's owner never ranks their own system.

Config: `allow_ties` (default false): whether two responses may share a rank.

Page. Each response has a rank select (fields `rank_1` .. `rank_k`, in shown order): the
page works without JavaScript. With it, the responses can be dragged into order, or
focused and ranked by keys: a digit gives the focused response that rank (without ties, the
response holding it takes the old rank), the arrow keys move it up or down (the ranks then
follow the order), and the list keeps itself sorted by rank (static/js/ranking.js).

Payload: `{"ranks": [rank of each shown response, in shown order]}`, ranks 1 (best) to k;
equal ranks are ties. An automatic item's payload adds `"automatic": "identical
responses"`.

The page, validation, payload and export are `RankingKinds`', which the ranking of whole
conversations (`annotation.kinds.conversation_ranking`) shares; only the items differ.

Export (`export_row`), one row per judgment: `{"campaign", "item", "worker", "batch",
"prompt", "systems", "ranks", "ranking", "started_at_ms", "duration_ms"}`, where
`systems` lists the systems of each shown response and `ranking` is the tiers of system
slugs, best first (systems in one tier are tied). In CSV, `systems` is one cell (each
response's systems joined by "+", responses by "; ") and `ranking` reads "b = c > a".
"""

from typing import ClassVar

from django.utils.translation import gettext, gettext_noop
from pydantic import Field

from evalhub.declared import Declared

from .ab import same_text
from .base import (
    NOT_SHOWN,
    AnswerField,
    ConfigInvalid,
    ItemSpec,
    PayloadInvalid,
    TaskKind,
    parse_answers,
)

# Ten responses fill a worker's screen already, and a tie of all of them is the most the
# Plackett-Luce fit expands (evalstats.plackett_luce.MAX_TIED).
MAX_SYSTEMS = 10
FIELD_PREFIX = "rank_"
AUTOMATIC = {"automatic": "identical responses"}


class RankingConfig(Declared):
    """A ranking campaign's config."""

    noun: ClassVar[str] = "ranking config key"

    allow_ties: bool = Field(
        False,
        description="Whether a worker may give two responses the same rank (a tie).",
    )


def _shown(responses, rng) -> tuple[list[str], list[list[str]]]:
    """Distinct texts in a random order, with the systems that wrote each."""
    texts: list[str] = []
    systems: list[list[str]] = []
    for response in responses:
        slug = response.submission.system.slug
        for index, text in enumerate(texts):
            if same_text(text, response.text):
                systems[index].append(slug)
                break
        else:
            texts.append(response.text)
            systems.append([slug])
    order = list(range(len(texts)))
    rng.shuffle(order)
    return [texts[i] for i in order], [sorted(systems[i]) for i in order]


def build_items(pairs, rng) -> list[ItemSpec]:
    """One item per prompt from A/B's (prompt, system's response, baseline's response)
    rows (`annotation.campaigns.response_pairs`): the system's and every baseline's."""
    by_prompt: dict[int, tuple] = {}
    for prompt, response_a, response_b in pairs:
        _, responses = by_prompt.setdefault(prompt.pk, (prompt, [response_a]))
        responses.append(response_b)
    specs = []
    for prompt, responses in by_prompt.values():
        if len(responses) > MAX_SYSTEMS:
            raise ConfigInvalid(
                f"A ranking shows at most {MAX_SYSTEMS} responses: choose at most "
                f"{MAX_SYSTEMS - 1} baselines."
            )
        texts, systems = _shown(responses, rng)
        content = {
            "context": prompt.context,
            "responses": texts,
            "meta": {"prompt": prompt.external_id, "systems": systems},
        }
        specs.append(
            ItemSpec(
                content=content,
                prompt_id=prompt.pk,
                shown_response_ids=tuple(r.pk for r in responses),
                auto_payload={"ranks": [1], **AUTOMATIC} if len(texts) == 1 else None,
            )
        )
    return specs


def ranking_tiers(systems: list[list[str]], ranks: list[int]) -> list[list[str]]:
    """The tiers of system slugs, best first, of a payload's `ranks` over shown responses
    written by `systems` (equal ranks, and identical texts, are one tier)."""
    tiers: dict[int, list[str]] = {}
    for slugs, rank in zip(systems, ranks, strict=True):
        tiers.setdefault(rank, []).extend(slugs)
    return [sorted(tiers[rank]) for rank in sorted(tiers)]


# A worker's messages, one whole sentence per ranked noun so that a language can inflect
# it ("Geben Sie Antwort 2 einen Rang", "Dale un rango a la conversación 2"): the noun is
# never translated on its own.
MESSAGES = {
    "response": {
        "name": gettext_noop("Response %(number)s"),
        "missing": gettext_noop("Give response %(number)s a rank."),
        "invalid": gettext_noop(
            "'{value}' is not a rank of response %(number)s: ranks go from 1 to %(k)s."
        ),
        "unknown": gettext_noop("No such response on this page: %(fields)s."),
        "shared": gettext_noop("Responses %(positions)s and %(last)s share rank %(rank)s."),
        "no_ties": gettext_noop("This campaign allows no ties: give each response its own rank."),
    },
    "conversation": {
        "name": gettext_noop("Conversation %(number)s"),
        "missing": gettext_noop("Give conversation %(number)s a rank."),
        "invalid": gettext_noop(
            "'{value}' is not a rank of conversation %(number)s: ranks go from 1 to %(k)s."
        ),
        "unknown": gettext_noop("No such conversation on this page: %(fields)s."),
        "shared": gettext_noop("Conversations %(positions)s and %(last)s share rank %(rank)s."),
        "no_ties": gettext_noop(
            "This campaign allows no ties: give each conversation its own rank."
        ),
    },
}


def message(noun: str, name: str, **values) -> str:
    """The worker's message `name` about a `noun`, in the page's language."""
    return gettext(MESSAGES[noun][name]) % values


def _rank_field(position: int, k: int, noun: str) -> AnswerField:
    return AnswerField(
        {str(r): r for r in range(1, k + 1)},
        missing=message(noun, "missing", number=position),
        # AnswerField fills in {value} itself.
        invalid=message(noun, "invalid", number=position, k=k),
    )


class RankingKinds(TaskKind):
    """What the rankings of responses and of whole conversations share: the config, the
    page (`template`, one entry per shown text or conversation), the validation and the
    export. A subclass says what it ranks (`noun`) and builds the items."""

    template = "annotation/kinds/ranking.html"
    shortcuts = (
        ("Tab", gettext_noop("focus a response")),
        ("1-9, 0", gettext_noop("give it that rank (0 is rank 10)")),
        ("↑ ↓", gettext_noop("move it up or down")),
    )
    config_schema = RankingConfig
    noun = "response"
    # The content key of the shown texts (or conversations), in shown order.
    shown_key = "responses"

    def entry(self, shown) -> dict:
        """What the page shows of one ranked thing."""
        return {"text": shown}

    def item_context(self, item, config):
        shown = item.content[self.shown_key]
        k = len(shown)
        entries = []
        for n, thing in enumerate(shown, 1):
            field = f"{FIELD_PREFIX}{n}"
            # `pair` is matched against the submitted (field, value) pairs when the page
            # comes back with an error, so the ranks given stay selected.
            options = [{"value": r, "pair": (field, str(r))} for r in range(1, k + 1)]
            entries.append(
                {
                    "position": n,
                    "name": message(self.noun, "name", number=n),
                    "field": field,
                    "options": options,
                    **self.entry(thing),
                }
            )
        return {
            "context": item.content.get("context", []),
            "noun": self.noun,
            "allow_ties": config["allow_ties"],
            "responses": entries,
        }

    def parse_payload(self, item, config, data):
        shown = item.content.get(self.shown_key)
        if not shown or len(shown) < 2:
            raise PayloadInvalid({"": gettext(NOT_SHOWN)})
        k = len(shown)
        fields = {f"{FIELD_PREFIX}{n}": _rank_field(n, k, self.noun) for n in range(1, k + 1)}

        def unknown_entries(keys):
            unknown = [key for key in keys if key.startswith(FIELD_PREFIX)]
            if not unknown:
                return ""
            return message(self.noun, "unknown", fields=", ".join(unknown))

        values = parse_answers(data, fields, unknown_entries)
        ranks = [values[f"{FIELD_PREFIX}{n}"] for n in range(1, k + 1)]
        if not config["allow_ties"]:
            shared = _shared_ranks(ranks, self.noun)
            if shared:
                raise PayloadInvalid({"": f"{shared} {message(self.noun, 'no_ties')}"})
        return {"ranks": ranks}

    def export_meta(self, meta: dict) -> dict:
        """The export's columns naming what was ranked (besides the systems)."""
        return {"prompt": meta["prompt"]}

    def export_row(self, judgment):
        meta = judgment.item.content["meta"]
        systems = meta["systems"]
        row = super().export_row(judgment)
        del row["payload"]  # its ranks are a column, and the ranking they give another
        ranks = judgment.payload["ranks"]
        return {
            **row,
            **self.export_meta(meta),
            "systems": systems,
            "ranks": ranks,
            "ranking": ranking_tiers(systems, ranks),
        }

    def csv_rows(self, judgment):
        # Plain cells: the systems behind each shown response joined by "+", and the
        # ranking written out ("b = c > a").
        row = self.export_row(judgment)
        row["systems"] = ["+".join(slugs) for slugs in row["systems"]]
        row["ranking"] = " > ".join(" = ".join(tier) for tier in row["ranking"])
        return [row]


class RankingKind(RankingKinds):
    key = "ranking"
    label = "K-way ranking of responses"

    def build_from_responses(self, pairs, rng) -> list[ItemSpec]:
        return build_items(pairs, rng)


def _shared_ranks(ranks: list[int], noun: str) -> str:
    holders: dict[int, list[int]] = {}
    for position, rank in enumerate(ranks, 1):
        holders.setdefault(rank, []).append(position)
    return " ".join(
        message(
            noun,
            "shared",
            positions=", ".join(map(str, positions[:-1])),
            last=positions[-1],
            rank=rank,
        )
        for rank, positions in sorted(holders.items())
        if len(positions) > 1
    )


KIND = RankingKind()
