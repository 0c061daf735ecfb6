"""REST API: tournaments (the pages' visibility, creating with the forms' checks) and the
staff conversation import."""

import json
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone
from rest_framework.test import APIClient

from evalhub import limits
from evalhub.models import Conversation, System
from tests import factories
from tournaments.models import PartnerSet, Tournament

pytestmark = pytest.mark.django_db

LIST = "/api/tournaments/"
IMPORT = "/api/conversations/import/"


def client_for(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Token {factories.api_token(user)}")
    return client


@pytest.fixture
def owner():
    return factories.user("owner")


@pytest.fixture
def systems():
    return [factories.system(None, slug=s) for s in ("a", "b", "c")]


def tournament(owner, slug, published):
    return Tournament.objects.create(
        slug=slug, name=slug, kind="spot_the_bot", domain="garden", owner=owner, published=published
    )


def slugs(response):
    return sorted(t["slug"] for t in response.json()["results"])


def test_list_and_retrieve_follow_the_pages_visibility(owner):
    tournament(owner, "open", True)
    tournament(owner, "closed", False)
    assert slugs(client_for().get(LIST)) == ["open"]
    assert slugs(client_for(factories.user("someone")).get(LIST)) == ["open"]
    assert slugs(client_for(owner).get(LIST)) == ["closed", "open"]
    assert slugs(client_for(factories.user("boss", staff=True)).get(LIST)) == ["closed", "open"]
    assert client_for().get(f"{LIST}closed/").status_code == 404
    detail = client_for(owner).get(f"{LIST}closed/").json()
    assert (detail["owner"], detail["kind"], detail["status"]) == (
        "owner",
        "spot_the_bot",
        "planning",
    )


def spot_payload(**overrides):
    data = {
        "slug": "api-cup",
        "name": "API cup",
        "kind": "spot_the_bot",
        "domain": "garden",
        "systems": ["a", "b"],
        "schedule": "all-play-all",
        "segment_lengths": [2, 3],
        "features": ["sensibleness"],
        "human_share": 0.2,
    }
    data.update(overrides)
    return data


def test_create_a_spot_the_bot_tournament(owner, systems):
    response = client_for(owner).post(LIST, spot_payload(), format="json")
    assert response.status_code == 201, response.json()
    t = Tournament.objects.get(slug="api-cup")
    assert (t.owner, t.segment_lengths, t.features, t.human_share) == (
        owner,
        [2, 3],
        ["sensibleness"],
        0.2,
    )
    assert sorted(t.systems.values_list("slug", flat=True)) == ["a", "b"]
    assert response.json()["status"] == "planning"


def field_errors(response) -> dict[str, list[str]]:
    """The API's one error shape, {"errors": [{"field", "message"}], "error_count"}, by field."""
    body = response.json()
    assert body["error_count"] == len(body["errors"])
    errors = {}
    for error in body["errors"]:
        errors.setdefault(error["field"], []).append(error["message"])
    return errors


def test_create_refuses_what_the_form_refuses(owner, systems):
    response = client_for(owner).post(
        LIST,
        spot_payload(systems=["a"], segment_lengths=[2, 2], features=["Bad"], domain=""),
        format="json",
    )
    assert response.status_code == 400
    errors = field_errors(response)
    assert errors["systems"] == ["All-play-all needs at least two systems."]
    assert "distinct whole numbers" in errors["segment_lengths"][0]
    assert "Feature name 'Bad'" in errors["features"][0]
    assert "domain" in errors
    assert not Tournament.objects.exists()


def test_bipartite_play_takes_a_partner_set_by_slug(owner, systems):
    PartnerSet.objects.create(slug="partners", name="Partners", version=1)
    latest = PartnerSet.objects.create(slug="partners", name="Partners", version=2)
    latest.systems.set(System.objects.filter(slug="c"))
    response = client_for(owner).post(
        LIST, spot_payload(schedule="bipartite-play", partner_set="partners"), format="json"
    )
    assert response.status_code == 201, response.json()
    assert response.json()["partner_set"] == {"slug": "partners", "version": 2}
    overlap = client_for(owner).post(
        LIST,
        spot_payload(
            slug="other", schedule="bipartite-play", partner_set="partners", systems=["a", "c"]
        ),
        format="json",
    )
    assert (
        overlap.status_code == 400
        and "cannot also be evaluated" in field_errors(overlap)["systems"][0]
    )


def test_private_systems_of_others_cannot_join_a_pool(owner, systems):
    factories.system(factories.user("someone"), slug="secret", visibility="private")
    response = client_for(owner).post(LIST, spot_payload(systems=["a", "secret"]), format="json")
    assert response.status_code == 400 and "systems" in field_errors(response)


def test_anonymous_cannot_create(systems):
    assert client_for().post(LIST, spot_payload(), format="json").status_code in (401, 403)
    assert not Tournament.objects.exists()


def test_create_an_ab_experiment_only_from_an_own_submission(owner):
    prompts = factories.prompt_set(2, slug="two")
    ours = factories.submission(factories.system(owner, slug="mine"), prompts)
    base = factories.system(None, slug="base", is_baseline=True)
    factories.submission(base, prompts)
    theirs = factories.submission(factories.system(factories.user(), slug="theirs"), prompts)
    payload = {"slug": "ab", "name": "AB", "kind": "ab", "baselines": ["base"]}
    refused = client_for(owner).post(
        LIST, {**payload, "submission": str(theirs.public_id)}, format="json"
    )
    assert refused.status_code == 400 and "submission" in field_errors(refused)
    created = client_for(owner).post(
        LIST, {**payload, "submission": str(ours.public_id)}, format="json"
    )
    assert created.status_code == 201, created.json()
    assert created.json()["prompt_set"] == "two" and created.json()["submission"] == str(
        ours.public_id
    )
    t = Tournament.objects.get(slug="ab")
    assert sorted(t.systems.values_list("slug", flat=True)) == ["base", "mine"]
    assert list(t.baselines.values_list("slug", flat=True)) == ["base"]


def test_the_schema_still_builds(client):
    schema = client.get("/api/schema/").content.decode()
    assert "/api/tournaments/{slug}/" in schema and "/api/conversations/import/" in schema


# Conversation import ----------------------------------------------------------------------


def upload(name, data):
    return {"file": SimpleUploadedFile(name, data)}


def test_staff_import_conversations(owner):
    staff = factories.user("boss", staff=True)
    line = {
        "id": "api-0",
        "domain": "garden",
        "speakers": ["newbot", "human"],
        "turns": [{"speaker": 0, "text": "hi"}, {"speaker": 1, "text": "hello"}],
    }
    response = client_for(staff).post(
        IMPORT, upload("c.jsonl", json.dumps(line).encode()), format="multipart"
    )
    assert response.status_code == 201
    assert response.json() == {"created": 1, "unchanged": 0, "systems_created": ["newbot"]}
    again = client_for(staff).post(
        IMPORT, upload("c.jsonl", json.dumps(line).encode()), format="multipart"
    )
    assert again.json() == {"created": 0, "unchanged": 1, "systems_created": []}
    assert Conversation.objects.get().speakers.count() == 2


def test_import_errors_come_back_with_their_lines():
    staff = factories.user("boss", staff=True)
    response = client_for(staff).post(
        IMPORT, upload("c.jsonl", b'{"id": "x"}\n[1]\n'), format="multipart"
    )
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert [e["line"] for e in errors] == [1, 2]
    assert not Conversation.objects.exists()


def test_only_staff_import_conversations(owner):
    response = client_for(owner).post(IMPORT, upload("c.jsonl", b"{}"), format="multipart")
    assert response.status_code == 403
    assert client_for().post(IMPORT, upload("c.jsonl", b"{}"), format="multipart").status_code in (
        401,
        403,
    )


def test_create_refuses_an_unknown_field_naming_the_allowed_ones(owner, systems):
    response = client_for(owner).post(LIST, spot_payload(batchsize=10), format="json")
    assert response.status_code == 400
    (message,) = field_errors(response)["batchsize"]
    assert "'batchsize' is an unknown field; allowed:" in message and "batch_size" in message
    assert not Tournament.objects.exists()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("conversations_per_pair", 5_000_000, "conversations_per_pair must be from 1 to 1000"),
        ("batch_size", 0, "batch_size must be from 1 to 200"),
        ("judgments_per_segment", 21, "judgments_per_segment must be from 1 to 20"),
        ("exchanges", 0, "exchanges must be from 1 to 50"),
        ("segment_lengths", [2, 51], "at most 50"),
        ("human_share", 0.95, "human_share must be from 0.0 to 0.9"),
    ],
)
def test_create_refuses_spot_the_bot_settings_out_of_range(owner, systems, field, value, message):
    response = client_for(owner).post(LIST, spot_payload(**{field: value}), format="json")
    assert response.status_code == 400
    assert message in " ".join(field_errors(response)[field])
    assert not Tournament.objects.exists()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("prompts_per_batch", 0, "prompts_per_batch must be from 1 to 100"),
        ("judgments_per_prompt", 21, "judgments_per_prompt must be from 1 to 20"),
        ("reward_per_judgment", "-1", "reward_per_judgment must be from 0 to 100"),
    ],
)
def test_create_refuses_ab_settings_out_of_range(owner, field, value, message):
    prompts = factories.prompt_set(2, slug="two")
    ours = factories.submission(factories.system(owner, slug="mine"), prompts)
    factories.submission(factories.system(None, slug="base", is_baseline=True), prompts)
    payload = {"slug": "ab", "name": "AB", "kind": "ab", "baselines": ["base"]}
    response = client_for(owner).post(
        LIST, {**payload, "submission": str(ours.public_id), field: value}, format="json"
    )
    assert response.status_code == 400
    assert message in " ".join(field_errors(response)[field])
    assert not Tournament.objects.exists()


def test_the_api_schema_shows_the_settings_ranges(client):
    schema = client.get("/api/schema/", {"format": "json"}).json()
    fields = schema["components"]["schemas"]["Tournament"]["properties"]
    assert (fields["batch_size"]["minimum"], fields["batch_size"]["maximum"]) == (1, 200)
    assert fields["prompts_per_batch"]["maximum"] == 100
    assert "Default 45." in fields["conversations_per_pair"]["description"]


def test_create_an_imported_tournament_with_the_conversations_it_includes(owner, systems):
    factories.conversation("ab-1", systems[:2], ["hi", "hello"], domain="garden")
    factories.conversation("hh-1", [None, None], ["hi", "hello"], domain="garden")
    payload = spot_payload(schedule="imported", included_conversations=["ab-1"], show_seed=True)
    response = client_for(owner).post(LIST, payload, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["included_conversations"] == ["ab-1"]
    t = Tournament.objects.get(slug="api-cup")
    assert list(t.included_conversations.values_list("external_id", flat=True)) == ["ab-1"]
    assert t.show_seed is True


def test_including_a_human_conversation_is_refused_and_nothing_is_created(owner, systems):
    factories.conversation("hh-1", [None, None], ["hi", "hello"], domain="garden")
    payload = spot_payload(schedule="imported", included_conversations=["hh-1", "nope"])
    response = client_for(owner).post(LIST, payload, format="json")
    assert response.status_code == 400
    assert "included_conversations" in field_errors(response)
    response = client_for(owner).post(
        LIST, spot_payload(schedule="imported", included_conversations=["hh-1"]), format="json"
    )
    assert response.status_code == 400
    assert field_errors(response) == {
        "included_conversations": ["Not a conversation between two systems: hh-1."]
    }
    assert not Tournament.objects.filter(slug="api-cup").exists()


# Issue 23, finding 1: a reference names only what the caller may see -----------------------


@pytest.fixture
def secret_conversation():
    """A conversation between another researcher's private and embargoed systems."""
    other = factories.user("carol")
    private = factories.system(other, slug="carol-private", visibility="private")
    embargoed = factories.system(
        other, slug="carol-embargoed", embargo_until=timezone.now() + timedelta(days=30)
    )
    return factories.conversation("carol/x--y--0", [private, embargoed], ["hi", "secret"])


def test_including_another_owners_private_conversation_is_not_found(
    owner, systems, secret_conversation
):
    payload = spot_payload(schedule="imported", included_conversations=["carol/x--y--0"])
    response = client_for(owner).post(LIST, payload, format="json")
    assert response.status_code == 400
    assert field_errors(response) == {
        "included_conversations": ["No conversation 'carol/x--y--0'."]
    }
    assert not Tournament.objects.filter(slug="api-cup").exists()
    assert not secret_conversation.included_in.exists()


def test_an_absent_conversation_gets_the_same_answer_as_one_not_yours(owner, systems):
    payload = spot_payload(schedule="imported", included_conversations=["carol/x--y--9"])
    response = client_for(owner).post(LIST, payload, format="json")
    assert response.status_code == 400
    assert field_errors(response) == {
        "included_conversations": ["No conversation 'carol/x--y--9'."]
    }
    assert not Tournament.objects.exists()


def test_the_owner_of_the_private_systems_includes_their_conversation(secret_conversation):
    carol = secret_conversation.speakers.first().system.owner
    payload = spot_payload(
        systems=["carol-private", "carol-embargoed"],
        schedule="imported",
        included_conversations=["carol/x--y--0"],
    )
    response = client_for(carol).post(LIST, payload, format="json")
    assert response.status_code == 201, response.json()
    assert list(secret_conversation.included_in.values_list("slug", flat=True)) == ["api-cup"]


def test_a_private_system_of_another_owner_is_not_found_like_an_absent_one(owner, systems):
    factories.system(factories.user("someone"), slug="secret", visibility="private")
    hidden = client_for(owner).post(LIST, spot_payload(systems=["a", "secret"]), format="json")
    absent = client_for(owner).post(LIST, spot_payload(systems=["a", "nope"]), format="json")
    assert field_errors(hidden)["systems"] == ["No system 'secret'."]
    assert field_errors(absent)["systems"] == ["No system 'nope'."]
    assert not Tournament.objects.exists()


def test_a_partner_set_with_another_owners_private_system_is_not_found(owner, systems):
    hidden = factories.system(factories.user("someone"), slug="secret", visibility="private")
    PartnerSet.objects.create(slug="theirs", name="Theirs", version=1).systems.set([hidden])
    payload = spot_payload(schedule="bipartite-play", partner_set="theirs")
    response = client_for(owner).post(LIST, payload, format="json")
    assert response.status_code == 400
    assert field_errors(response) == {"partner_set": ["No partner set 'theirs'."]}
    assert not Tournament.objects.exists()


def test_another_owners_submission_is_not_found_like_an_absent_one(owner):
    prompts = factories.prompt_set(2, slug="two")
    factories.system(None, slug="base", is_baseline=True)
    theirs = factories.submission(factories.system(factories.user(), slug="theirs"), prompts)
    payload = {"slug": "ab", "name": "AB", "kind": "ab", "baselines": ["base"]}
    response = client_for(owner).post(
        LIST, {**payload, "submission": str(theirs.public_id)}, format="json"
    )
    assert field_errors(response)["submission"] == [f"No submission '{theirs.public_id}'."]
    assert not Tournament.objects.exists()


def test_the_partner_set_list_leaves_out_sets_naming_a_hidden_system(owner, systems):
    hidden = factories.system(factories.user("someone"), slug="secret", visibility="private")
    PartnerSet.objects.create(slug="theirs", name="Theirs", version=1).systems.set([hidden])
    PartnerSet.objects.create(slug="open", name="Open", version=1).systems.set(systems[:1])
    response = client_for(owner).get("/api/partner-sets/")
    assert response.status_code == 200
    assert [s["slug"] for s in response.json()] == ["open"]
    assert PartnerSet.objects.count() == 2


# Issue 23, finding 9: sizes ---------------------------------------------------------------


def test_create_refuses_a_description_over_its_limit(owner, systems):
    long = "x" * (limits.DESCRIPTION_CHARS + 1)
    response = client_for(owner).post(LIST, spot_payload(description=long), format="json")
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == ["description"]
    assert not Tournament.objects.exists()


def test_create_refuses_a_tournament_past_the_quota(settings, owner, systems):
    settings.EVALHUB_QUOTA_TOURNAMENTS = 1
    tournament(owner, "first", False)
    response = client_for(owner).post(LIST, spot_payload(), format="json")
    assert response.status_code == 400
    assert "(EVALHUB_QUOTA_TOURNAMENTS=1)" in response.json()["errors"][0]["message"]
    assert list(Tournament.objects.values_list("slug", flat=True)) == ["first"]
