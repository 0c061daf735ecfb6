"""Export a whole tournament: settings, systems, conversations and judgments.

Files written to the output directory:
- `conversations.jsonl`: the conversations the campaign's items show (all of them, bot-bot
  and human-human controls), or, before there is a campaign, those it would be built
  from; one line each in the interchange format `{"id", "domain", "speakers", "turns"}`,
  plus `"source"` and, when there is any, `"metadata"` so that importing the file into a
  catalog that holds them finds them unchanged;
- `judgments.jsonl`: one line per judgment of a task item, exactly the task kind's export
  row (for Spot The Bot the interchange line `{"conversation", "worker", "batch",
  "exchanges", "labels", "better", "started_at_ms", "duration_ms"}`, `worker` being the
  worker's opaque public id). Judgments of gold checks are left out: they measure
  workers, and the interchange format cannot say that a line is one;
- `tournament.json`: the tournament's settings, its campaign's and the counts;
- `systems.json`: the systems of the pool and every system speaking in the conversations.

`import_spotthebot` reads the first two back; the judgments it creates are the same
(conversation, worker, exchanges, labels, better) rows, workers renamed to the ids above.
An A/B tournament has no conversations: its conversations.jsonl is empty and its
judgments are the A/B kind's rows.
"""

import json
from pathlib import Path

from django.utils import timezone

from annotation.export import judgments as campaign_judgments
from annotation.models import Item
from evalhub.models import Conversation, System

from .models import Tournament
from .spot_the_bot_campaign import bot_conversations

CHUNK = 500


def conversation_line(conversation: Conversation) -> dict:
    """A conversation (speakers__system and turns prefetched) as an interchange line."""
    speakers = sorted(conversation.speakers.all(), key=lambda s: s.index)
    turns = sorted(conversation.turns.all(), key=lambda t: t.position)
    line = {
        "id": conversation.external_id,
        "domain": conversation.domain,
        "speakers": [s.system.slug if s.system_id else "human" for s in speakers],
        "turns": [{"speaker": t.speaker, "text": t.text} for t in turns],
        "source": conversation.source,
    }
    if conversation.seed_turns:
        line["seed"] = conversation.seed_turns  # the opening given to both, no one's turn
    if conversation.metadata:
        line["metadata"] = conversation.metadata
    return line


def conversation_ids(tournament: Tournament) -> list[int]:
    if tournament.campaign_id is not None:
        ids = set()
        items = Item.objects.filter(campaign_id=tournament.campaign_id)
        for a, b in items.values_list("conversation_id", "conversation_b_id").distinct():
            ids.update(pk for pk in (a, b) if pk is not None)
        return sorted(ids)
    if tournament.kind == Tournament.Kind.SPOT_THE_BOT:
        return list(bot_conversations(tournament).values_list("pk", flat=True))
    return []


def _write_lines(path: Path, rows) -> int:
    n = 0
    with path.open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            n += 1
    return n


def _conversation_lines(ids: list[int]):
    ordered = in_external_id_order(ids)
    for start in range(0, len(ordered), CHUNK):
        chunk = Conversation.objects.filter(pk__in=ordered[start : start + CHUNK])
        for conversation in chunk.prefetch_related("speakers__system", "turns").order_by(
            "external_id"
        ):
            yield conversation_line(conversation)


def in_external_id_order(ids: list[int]) -> list[int]:
    """Ids in external id order, read a chunk at a time (SQLite limits IN lists)."""
    pairs = []
    for start in range(0, len(ids), CHUNK):
        pairs += Conversation.objects.filter(pk__in=ids[start : start + CHUNK]).values_list(
            "external_id", "pk"
        )
    return [pk for _, pk in sorted(pairs)]


def judgment_lines(tournament: Tournament):
    campaign = tournament.campaign
    if campaign is None:
        return
    kind = campaign.kind
    rows = campaign_judgments(campaign).filter(item__role=Item.Role.TASK)
    for judgment in rows.iterator(chunk_size=1000):
        yield kind.export_row(judgment)


def _system_row(system: System) -> dict:
    return {
        "slug": system.slug,
        "name": system.name,
        "description": system.description,
        "paper_url": system.paper_url,
        "code_url": system.code_url,
        "weights_url": system.weights_url,
        "is_baseline": system.is_baseline,
    }


def settings_of(tournament: Tournament) -> dict:
    campaign = tournament.campaign
    partner_set = tournament.partner_set
    return {
        "slug": tournament.slug,
        "name": tournament.name,
        "kind": tournament.kind,
        "description": tournament.description,
        "domain": tournament.domain,
        "status": tournament.status,
        "published": tournament.published,
        "systems": sorted(tournament.systems.values_list("slug", flat=True)),
        "segment_lengths": tournament.segment_lengths,
        "conversations_per_pair": tournament.conversations_per_pair,
        "human_share": tournament.human_share,
        "features": tournament.features,
        "batch_size": tournament.batch_size,
        "max_batches_per_worker": tournament.max_batches_per_worker,
        "judgments_per_segment": tournament.judgments_per_segment,
        "schedule": tournament.schedule,
        "partner_set": (
            {"slug": partner_set.slug, "version": partner_set.version} if partner_set else None
        ),
        "exchanges": tournament.exchanges,
        "seed": tournament.seed,
        "prompt_set": tournament.prompt_set.slug if tournament.prompt_set_id else None,
        "submission": str(tournament.submission.public_id) if tournament.submission_id else None,
        "baselines": sorted(tournament.baselines.values_list("slug", flat=True)),
        "judgments_per_prompt": tournament.judgments_per_prompt,
        "prompts_per_batch": tournament.prompts_per_batch,
        "reward_per_judgment": str(tournament.reward_per_judgment),
        "campaign": (
            {
                "slug": campaign.slug,
                "task_kind": campaign.task_kind,
                "task_config": campaign.task_config,
                "status": campaign.status,
                "redundancy": campaign.redundancy,
                "batch_size": campaign.batch_size,
                "max_batches_per_worker": campaign.max_batches_per_worker,
            }
            if campaign
            else None
        ),
    }


def export_tournament(tournament: Tournament, outdir: Path) -> dict[str, int]:
    """Write the four files into `outdir` (created if missing); returns the counts."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    ids = conversation_ids(tournament)
    n_conversations = _write_lines(outdir / "conversations.jsonl", _conversation_lines(ids))
    n_judgments = _write_lines(outdir / "judgments.jsonl", judgment_lines(tournament))
    slugs = set(tournament.systems.values_list("slug", flat=True))
    slugs |= set(tournament.baselines.values_list("slug", flat=True))
    for start in range(0, len(ids), CHUNK):
        speaking = System.objects.filter(
            speaking_in__conversation_id__in=ids[start : start + CHUNK]
        )
        slugs |= set(speaking.values_list("slug", flat=True))
    systems = [_system_row(s) for s in System.objects.filter(slug__in=slugs).order_by("slug")]
    counts = {
        "conversations": n_conversations,
        "judgments": n_judgments,
        "systems": len(systems),
    }
    info = {**settings_of(tournament), "counts": counts, "exported_at": timezone.now().isoformat()}
    (outdir / "tournament.json").write_text(
        json.dumps(info, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
    )
    (outdir / "systems.json").write_text(
        json.dumps(systems, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
    )
    return counts
