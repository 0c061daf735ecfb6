"""Spot The Bot campaign generation: which conversations, segments, controls, packing."""

import json
from collections import Counter

import pytest
from django.urls import reverse

from annotation.kinds import get_kind
from annotation.models import Assignment, Item
from evalhub.errors import UserInputError
from evalhub.models import Conversation, System
from evalhub.services import import_conversations
from tests import factories
from tournaments import spot_the_bot_campaign
from tournaments.models import PartnerSet, PlannedDialogue, Tournament

pytestmark = pytest.mark.django_db


def conversation(cid, speakers, exchanges, domain="garden"):
    return {
        "id": cid,
        "domain": domain,
        "speakers": speakers,
        "turns": [{"speaker": p % 2, "text": f"{cid} says line {p}"} for p in range(2 * exchanges)],
    }


def load(*lines):
    data = "\n".join(json.dumps(line) for line in lines).encode()
    import_conversations(data=data, filename="c.jsonl")


@pytest.fixture
def catalog():
    """Pool a, b. Bot-bot in the garden: a-b ×3 (5 exchanges), b-a ×1 (3), a-a ×1 (2),
    a-b ×1 (1 exchange: too short for every length). Not used: a-c (c not in the pool),
    a-b of another domain. Human-human in the garden: 4 of 5 exchanges."""
    for slug in ("a", "b", "c"):
        factories.system(None, slug=slug)
    load(
        *(conversation(f"ab-{i}", ["a", "b"], 5) for i in range(3)),
        conversation("ba-0", ["b", "a"], 3),
        conversation("aa-0", ["a", "a"], 2),
        conversation("ab-short", ["a", "b"], 1),
        conversation("ac-0", ["a", "c"], 5),
        conversation("ab-kitchen", ["a", "b"], 5, domain="kitchen"),
        *(conversation(f"hh-{i}", ["human", "human"], 5) for i in range(4)),
    )


# The imported conversations the tournaments of these tests include (not ac-0: c is not in
# the pool; not ab-kitchen: another domain).
INCLUDED = ["ab-0", "ab-1", "ab-2", "ba-0", "aa-0", "ab-short"]


def tournament(*, include=True, **fields):
    fields.setdefault("slug", "garden-cup")
    defaults = {
        "name": "Garden cup",
        "kind": "spot_the_bot",
        "domain": "garden",
        "segment_lengths": [2, 3, 5],
        "human_share": 0.0,
        "batch_size": 4,
        "judgments_per_segment": 2,
        "max_batches_per_worker": 2,
        "features": ["sensibleness", "fluency"],
    }
    t = Tournament.objects.create(**{**defaults, **fields})
    t.systems.set(System.objects.filter(slug__in=["a", "b"]))
    if include:
        t.included_conversations.set(Conversation.objects.filter(external_id__in=INCLUDED))
    return t


def test_segments_per_length_and_skipped_conversations(catalog):
    result = spot_the_bot_campaign.generate_campaign(tournament())
    # ab-0..2: 2, 3, 5 each; ba-0: 2, 3 (5 skipped); aa-0: 2 (3, 5 skipped); ab-short: all 3.
    assert result.segments == {2: 5, 3: 4, 5: 3}
    assert result.skipped == 1 + 2 + 3
    assert result.conversations == 5
    used = set(Item.objects.values_list("group_key", flat=True))
    assert used == {"ab-0", "ab-1", "ab-2", "ba-0", "aa-0"}
    assert (result.controls, result.controls_wanted) == (0, 0)


def test_campaign_settings_come_from_the_tournament(catalog):
    t = tournament()
    campaign = spot_the_bot_campaign.generate_campaign(t).campaign
    t.refresh_from_db()
    assert t.campaign == campaign and t.status == "ready"
    assert (campaign.task_kind, campaign.status) == ("spot_the_bot", "draft")
    assert (campaign.redundancy, campaign.batch_size, campaign.max_batches_per_worker) == (2, 4, 2)
    assert campaign.task_config["features"] == ["sensibleness", "fluency"]
    assert campaign.task_config["segment_lengths"] == [2, 3, 5]
    assert Assignment.objects.filter(campaign=campaign, status="open").count() == (
        2 * campaign.batches.count()
    )


def test_human_controls_make_up_the_share_and_carry_gold(catalog):
    result = spot_the_bot_campaign.generate_campaign(tournament(human_share=0.2))
    # 12 bot segments; n / (12 + n) = 0.2 gives n = 3.
    assert (result.controls, result.controls_wanted) == (3, 3)
    controls = Item.objects.filter(group_key__startswith="hh-")
    assert controls.count() == 3
    for item in controls:
        assert item.role == "task" and item.batch_id is not None
        assert item.gold["labels"] == ["human", "human"]
        assert item.content["meta"]["speakers"] == ["human", "human"]
        assert "gold" not in json.dumps(item.content)


def test_a_share_larger_than_the_domain_has_is_reported(catalog):
    result = spot_the_bot_campaign.generate_campaign(tournament(human_share=0.9))
    # 12 bot segments want 108 controls; 4 human conversations give 4 × 3 segments.
    assert (result.controls, result.controls_wanted) == (12, 108)


def test_packing_invariants_hold_in_the_stored_campaign(catalog):
    campaign = spot_the_bot_campaign.generate_campaign(
        tournament(human_share=0.25, batch_size=3)
    ).campaign
    batches = {}
    for item in Item.objects.filter(campaign=campaign).select_related("batch"):
        batches.setdefault(item.batch.position, []).append(item)
    assert sum(len(b) for b in batches.values()) == Item.objects.filter(campaign=campaign).count()
    for items in batches.values():
        assert len(items) <= 3
        keys = [i.group_key for i in items]
        assert len(keys) == len(set(keys)), "two segments of one conversation in a batch"
        assert sorted(i.order_in_batch for i in items) == list(range(len(items)))
    # Batches mix strata: the first batch takes from three different (pair, length) strata.
    first = batches[0]
    strata = {(spot_the_bot_campaign.pair_of(i), i.segment_length) for i in first}
    assert len(strata) == 3


def test_pairs_of_the_packer_are_sorted_slugs_or_human(catalog):
    spot_the_bot_campaign.generate_campaign(tournament(human_share=0.25))
    pairs = Counter(spot_the_bot_campaign.pair_of(i) for i in Item.objects.all())
    assert set(pairs) == {"a|b", "a|a", "human|human"}
    assert pairs["a|b"] == 3 * 3 + 2  # ab-0..2 and ba-0, whose speakers are b then a


def test_bipartite_play_judges_only_the_conversations_it_planned(catalog):
    partners = PartnerSet.objects.create(slug="p", name="Partners")
    partners.systems.set(System.objects.filter(slug="c"))
    t = tournament(schedule="bipartite-play", partner_set=partners, include=False)
    t.systems.set(System.objects.filter(slug="a"))
    PlannedDialogue.objects.create(
        tournament=t,
        key="a--c--0",
        speakers=["a", "c"],
        index=0,
        seed=1,
        status="complete",
        conversation=Conversation.objects.get(external_id="ac-0"),
    )
    result = spot_the_bot_campaign.generate_campaign(t)
    # Not a's self-play aa-0, nor a-b or b-a: earlier conversations of the domain among
    # the pool are no part of this tournament's plan.
    assert set(Item.objects.values_list("group_key", flat=True)) == {"ac-0"}
    assert result.segments == {2: 1, 3: 1, 5: 1}


def test_an_imported_tournament_judges_only_what_it_includes(catalog):
    t = tournament(include=False)
    assert spot_the_bot_campaign.available(t)["bot"] == 0
    with pytest.raises(spot_the_bot_campaign.GenerationInvalid, match="include imported"):
        spot_the_bot_campaign.generate_campaign(t)
    assert spot_the_bot_campaign.include_conversations(t, ["ab-0", "ba-0", "ab-0"]) == 2
    assert spot_the_bot_campaign.include_conversations(t, ["ab-0"]) == 0
    spot_the_bot_campaign.generate_campaign(t)
    assert set(Item.objects.values_list("group_key", flat=True)) == {"ab-0", "ba-0"}


def test_including_unknown_or_human_conversations_is_refused(catalog):
    t = tournament(include=False)
    with pytest.raises(UserInputError, match="No conversation with the id nope") as refused:
        spot_the_bot_campaign.include_conversations(t, ["ab-0", "nope"])
    assert refused.value.problems[0].field == "included_conversations"
    with pytest.raises(UserInputError, match="Not a conversation between two systems: hh-0"):
        spot_the_bot_campaign.include_conversations(t, ["ab-0", "hh-0"])
    assert not t.included_conversations.exists()


def test_nothing_is_stored_without_conversations():
    factories.system(None, slug="a")
    factories.system(None, slug="b")
    t = tournament()
    with pytest.raises(spot_the_bot_campaign.GenerationInvalid, match="collected or included"):
        spot_the_bot_campaign.generate_campaign(t)
    t.refresh_from_db()
    assert t.campaign is None and t.status == "planning"
    assert not Item.objects.exists()
    assert not System.objects.filter(slug="x").exists()


def test_a_tournament_gets_one_campaign(catalog):
    t = tournament()
    spot_the_bot_campaign.generate_campaign(t)
    with pytest.raises(spot_the_bot_campaign.GenerationInvalid, match="already has its campaign"):
        spot_the_bot_campaign.generate_campaign(t)


def test_not_while_conversations_are_being_collected(catalog):
    t = tournament(schedule="all-play-all")
    PlannedDialogue.objects.create(
        tournament=t, key="a--b--0", speakers=["a", "b"], index=0, seed=1
    )
    with pytest.raises(
        spot_the_bot_campaign.GenerationInvalid, match="1 planned conversation is still"
    ):
        spot_the_bot_campaign.generate_campaign(t)
    PlannedDialogue.objects.update(status="failed")
    assert spot_the_bot_campaign.generate_campaign(t).batches > 0


def test_an_ab_tournament_is_refused(catalog):
    t = tournament(kind="ab")
    with pytest.raises(spot_the_bot_campaign.GenerationInvalid, match="not a Spot The Bot"):
        spot_the_bot_campaign.generate_campaign(t)


def test_bad_features_are_refused_with_the_kind_message(catalog):
    t = tournament(features=["Bad Name"])
    with pytest.raises(spot_the_bot_campaign.GenerationInvalid, match="Feature name 'Bad Name'"):
        spot_the_bot_campaign.generate_campaign(t)
    assert not Item.objects.exists()


def test_the_same_catalog_gives_the_same_campaign(catalog):
    first = spot_the_bot_campaign.generate_campaign(tournament(human_share=0.2)).campaign
    layout = list(first.items.values_list("group_key", "segment_length", "batch__position"))
    first.delete()
    Tournament.objects.all().delete()
    second = spot_the_bot_campaign.generate_campaign(tournament(human_share=0.2)).campaign
    assert (
        list(second.items.values_list("group_key", "segment_length", "batch__position")) == layout
    )


def test_workers_never_see_the_gold_of_controls(client, catalog):
    t = tournament(human_share=0.5, batch_size=30, judgments_per_segment=1)
    campaign = spot_the_bot_campaign.generate_campaign(t).campaign
    campaign.status = "live"
    campaign.allow_worker_param = True
    campaign.save()
    # An unpublished tournament's campaign serves only invited or platform workers
    # (annotation/visibility.py); this test is about gold, so the link is opened to all.
    type(t).objects.filter(pk=t.pk).update(published=True)
    explanation = Item.objects.filter(gold__isnull=False).first().gold["explanation"]
    client.get(reverse("annotation:start", args=[campaign.slug]) + "?worker=w1")
    assignment = Assignment.objects.get(worker__external_id="link:w1")
    kind = get_kind("spot_the_bot")
    seen_controls = 0
    for item in assignment.batch.items.order_by("order_in_batch"):
        page = client.get(assignment.get_absolute_url()).content.decode()
        assert explanation not in page and '"human", "human"' not in page
        seen_controls += item.gold is not None
        answer = {"label_0": "bot", "label_1": "bot"}
        answer.update(
            {f"better_{f}": "none" for f in kind.clean_config(campaign.task_config)["features"]}
        )
        url = reverse("annotation:submit-item", args=[assignment.public_id, item.pk])
        assert client.post(url, answer).status_code == 302
    assert seen_controls > 0


# Issue 23, finding 2: human-human controls are the curated ones and the owner's own ---------


def test_another_researchers_uploads_never_become_controls(catalog):
    from evalhub.services import import_seed_conversations

    ada, bob = factories.user("ada"), factories.user("bob")
    data = json.dumps(conversation("bob-hh", ["human", "human"], 5)).encode()
    import_seed_conversations(data=data, filename="s.jsonl", user=bob)
    data = json.dumps(conversation("ada-hh", ["human", "human"], 5)).encode()
    import_seed_conversations(data=data, filename="s.jsonl", user=ada)
    t = tournament(owner=ada, human_share=0.5)
    assert spot_the_bot_campaign.available(t)["human"] == 5  # hh-0..3 (curated) and ada-hh
    result = spot_the_bot_campaign.generate_campaign(t)
    controls = set(
        Item.objects.filter(
            campaign=result.campaign, conversation__speakers__system__isnull=True
        ).values_list("conversation__external_id", flat=True)
    )
    assert "bob-hh" not in controls and controls <= {"hh-0", "hh-1", "hh-2", "hh-3", "ada-hh"}
    assert Conversation.objects.get(external_id="bob-hh").owner == bob


def test_the_seed_pool_of_a_tournament_leaves_out_other_researchers_uploads():
    from evalhub.services import import_seed_conversations
    from tournaments import collection

    bob = factories.user("bob")
    data = json.dumps(conversation("bob-hh", ["human", "human"], 5, domain="demo")).encode()
    import_seed_conversations(data=data, filename="s.jsonl", user=bob)
    assert collection.seed_pool("demo", owner=factories.user("ada")) == []
    assert collection.seed_pool("demo", owner=bob) == [Conversation.objects.get().pk]
    with pytest.raises(UserInputError):
        collection.check_seed_pool("demo", owner=None)
