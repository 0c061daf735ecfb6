import pytest

from analysis.inputs.judgments import NoCampaign, load_inputs
from analysis.reports import canonical_digest
from annotation.models import Judgment, Worker
from tests.analysis import builders

pytestmark = pytest.mark.django_db


def test_spot_the_bot_rows_follow_the_payloads():
    tournament = builders.spot_the_bot_tournament()
    data = load_inputs(tournament)
    judgments = Judgment.objects.filter(campaign=tournament.campaign).select_related("item")
    assert len(data.judgment) == 2 * judgments.count()  # one row per speaker
    assert data.features == ("sensibleness", "specificity", "fluency")
    judgment = judgments.order_by("pk").first()
    rows = [i for i, pk in enumerate(data.judgment) if pk == judgment.pk]
    meta = judgment.item.content["meta"]
    for i in rows:
        speaker = data.speaker[i]
        assert data.system[i] == meta["speakers"][speaker]
        assert data.opponent[i] == meta["speakers"][1 - speaker]
        assert data.exchanges[i] == meta["exchanges"] == judgment.item.segment_length
        assert data.label[i] == judgment.payload["labels"][speaker]
        expected = tuple(
            0
            if judgment.payload["better"][f] is None
            else (1 if judgment.payload["better"][f] == speaker else -1)
            for f in data.features
        )
        assert data.preferences[i].tolist() == list(expected)


def test_human_controls_are_rows_of_the_human_system():
    data = load_inputs(builders.spot_the_bot_tournament())
    humans = [i for i, s in enumerate(data.system) if s == "human"]
    assert humans and all(data.opponent[i] == "human" for i in humans)


def test_excluding_blocked_workers_drops_their_judgments_and_changes_the_digest():
    tournament = builders.spot_the_bot_tournament()
    everything = load_inputs(tournament)
    careless = Worker.objects.filter(external_id__contains="careless")
    blocked_ids = set(careless.values_list("pk", flat=True))
    careless.update(blocked=True)
    kept = load_inputs(tournament, exclude_blocked=True)
    assert blocked_ids & set(everything.worker)
    assert not blocked_ids & set(kept.worker)
    assert len(kept.judgment) < len(everything.judgment)
    assert canonical_digest(kept) != canonical_digest(everything)
    # Without the switch the blocked workers' judgments stay in.
    assert canonical_digest(load_inputs(tournament)) == canonical_digest(everything)


def test_ab_inputs_include_automatic_ties_weighted_by_the_redundancy():
    tournament = builders.ab_tournament()
    data = load_inputs(tournament)
    campaign = tournament.campaign
    automatic = campaign.items.filter(auto_payload__isnull=False).count()
    assert sum(data.automatic) == automatic
    assert data.automatic_weight == campaign.redundancy
    assert len(data.choice) - automatic == Judgment.objects.filter(campaign=campaign).count()
    assert set(data.choice) <= {"a", "b", "tie"}
    assert all(c == "tie" for c, auto in zip(data.choice, data.automatic, strict=True) if auto)


def test_gold_judgments_are_left_out():
    tournament = builders.spot_the_bot_tournament()
    before = load_inputs(tournament)
    judgment = Judgment.objects.filter(campaign=tournament.campaign).first()
    judgment.item.role = "gold"
    judgment.item.save(update_fields=["role"])
    after = load_inputs(tournament)
    assert judgment.pk in before.judgment and judgment.pk not in after.judgment


def test_the_query_count_does_not_grow_with_the_study(django_assert_max_num_queries):
    small = builders.spot_the_bot_tournament(
        model=builders.small_spot_the_bot_model(conversations_per_pair=2)
    )
    large = builders.spot_the_bot_tournament(
        model=builders.small_spot_the_bot_model(conversations_per_pair=8)
    )
    for tournament in (small, large):
        tournament.refresh_from_db()
        with django_assert_max_num_queries(3):
            load_inputs(tournament)


def test_a_tournament_without_campaign_has_nothing_to_analyse():
    with pytest.raises(NoCampaign, match="has no campaign"):
        load_inputs(builders.bare_tournament())


def test_a_bipartite_tournament_names_its_partners_and_they_are_not_ranked():
    from analysis.reports import build_report
    from evalhub.models import System
    from tournaments.models import PartnerSet, Tournament

    tournament = builders.spot_the_bot_tournament()
    assert load_inputs(tournament).partners == ()
    partners = PartnerSet.objects.create(slug="fixed", name="Fixed partners")
    partners.systems.set(System.objects.filter(slug="bot-middle"))
    Tournament.objects.filter(pk=tournament.pk).update(
        schedule=Tournament.Schedule.BIPARTITE_PLAY, partner_set=partners
    )
    tournament.refresh_from_db()
    data = load_inputs(tournament)
    assert data.partners == ("bot-middle",)
    result = build_report(data, builders.FAST)
    assert "bot-middle" not in result["systems"]
    assert [row["system"] for row in result["partners"]] == ["bot-middle"]
