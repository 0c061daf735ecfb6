"""Who is working: the worker a start link names, remembered in the signed session.

A start link takes a platform's participant id, a logged-in account, a single-use
invitation (annotation/invitations.py) or, where the campaign allows it, any `?worker=`
id. Identities new to a campaign are rate-limited per client address and per campaign,
so that one script cannot invent hundreds of workers and drain a campaign.
"""

from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from evalhub import ratelimit

from .crowd.base import Arrival
from .models import Assignment, Worker

SESSION_KEY = "annotation_worker"
GENERIC_PREFIX = "link:"  # the local provider's `?worker=` ids


@dataclass(frozen=True)
class Refusal:
    """Why a visit gets no identity, and the HTTP status that says so."""

    reason: str
    status: int = 403


def arriving_worker(request, campaign, arrival: Arrival | None):
    """(worker, None) for the identity this visit brings (or the browser's, when it brings
    none), or (None, Refusal)."""
    if arrival is None:
        return current_worker(request), None
    if arrival.external_id.startswith(GENERIC_PREFIX) and not campaign.allow_worker_param:
        return None, Refusal(
            _(
                "This campaign does not take ?worker= ids. Use the link your study or your "
                "invitation gave you, or log in."
            )
        )
    if _new_to_campaign(request, campaign, arrival) and not admit_newcomer(request, campaign):
        return None, Refusal(
            _("Too many new participants have started from here just now. Please try again later."),
            status=429,
        )
    return worker_for(arrival, request.user), None


def _new_to_campaign(request, campaign, arrival: Arrival) -> bool:
    """Whether the identity is one a script could have invented: not yet working in this
    campaign and not this browser's. An account's own identity is limited by sign-ups."""
    if arrival.provider == "local" and arrival.external_id.startswith("user:"):
        return False
    worker = Worker.objects.filter(
        provider=arrival.provider, external_id=arrival.external_id
    ).first()
    if worker is None:
        return True
    if is_current_worker(request, worker):
        return False
    return not Assignment.objects.filter(campaign=campaign, worker=worker).exists()


def admit_newcomer(request, campaign) -> bool:
    """Count a new identity against the address's and the campaign's limits. While they
    cannot be counted (Redis down) newcomers are refused with a 503 page: a script must not
    mint workers unchecked. Workers already known are not newcomers and go on."""
    closed = ratelimit.Outage.FAIL_CLOSED
    return ratelimit.allow(
        request,
        "new-worker",
        settings.EVALHUB_NEW_WORKERS_PER_ADDRESS_PER_HOUR,
        3600,
        on_outage=closed,
    ) and ratelimit.allow_key(
        f"new-worker-campaign:{campaign.pk}",
        settings.EVALHUB_NEW_WORKERS_PER_CAMPAIGN_PER_MINUTE,
        60,
        on_outage=closed,
    )


def worker_for(arrival: Arrival, user=None) -> Worker:
    try:
        with transaction.atomic():
            worker, _ = Worker.objects.get_or_create(
                provider=arrival.provider, external_id=arrival.external_id
            )
    except IntegrityError:  # two first visits at once
        worker = Worker.objects.get(provider=arrival.provider, external_id=arrival.external_id)
    if (
        user is not None
        and user.is_authenticated
        and worker.user_id is None
        and (arrival.external_id == f"user:{user.username}")
    ):
        Worker.objects.filter(pk=worker.pk).update(user=user)
        worker.user = user
    return worker


def remember(request, worker: Worker) -> None:
    public_id = str(worker.public_id)
    if request.session.get(SESSION_KEY) == public_id:
        # Assigning it again would mark the session modified, and every start link of a
        # returning worker would save it: a database UPDATE and a cache write.
        return
    # A new identity on this browser gets a new session key (no session fixation).
    request.session.cycle_key()
    request.session[SESSION_KEY] = public_id


def current_worker(request) -> Worker | None:
    public_id = request.session.get(SESSION_KEY)
    if not public_id:
        return None
    return Worker.objects.filter(public_id=public_id).first()


def is_current_worker(request, worker: Worker) -> bool:
    """Whether `worker` is the one this browser session remembers, without a query (the
    item pages ask it on every request, with the worker already loaded)."""
    public_id = request.session.get(SESSION_KEY)
    return bool(public_id) and public_id == str(worker.public_id)


PLATFORM_SUBMIT_KEY = "annotation_platform_submit"


def platform_session(arrival) -> str:
    """The platform's id for this visit: Prolific's SESSION_ID or MTurk's assignmentId."""
    extra = (arrival.extra or {}) if arrival else {}
    return (extra.get("session_id") or extra.get("assignment_id") or "")[:200]


def platform_conflict(campaign, worker, arrival, *, same_browser: bool, one_batch: bool):
    """A refusal (its text) when this worker id has work bound to another platform session
    and the visit comes from another browser: someone else presenting their id gets
    neither their batch nor their completion code. None when all is well."""
    if arrival is None or same_browser:
        return None
    session_ref = platform_session(arrival)
    statuses = (
        Assignment.DONE + (Assignment.Status.STARTED,)
        if one_batch
        else (Assignment.Status.STARTED,)
    )
    bound = Assignment.objects.filter(
        campaign=campaign, worker=worker, status__in=statuses
    ).exclude(provider_ref="")
    # A visit that names no session matches no bound one: leaving SESSION_ID out of a
    # copied link must not be a way around the binding.
    if session_ref:
        bound = bound.exclude(provider_ref=session_ref)
    if bound.exists():
        return _(
            "This participant id is already working in another session. Continue in the "
            "browser where you started."
        )
    return None


def bind_platform_session(request, assignment, arrival) -> None:
    """Record the platform session on the assignment (the key sync matches it by), and
    where MTurk wants the finished assignment posted back."""
    session_ref = platform_session(arrival)
    if session_ref and assignment.provider_ref != session_ref:
        Assignment.objects.filter(pk=assignment.pk).update(provider_ref=session_ref)
        assignment.provider_ref = session_ref
    turk_submit_to = (arrival.extra or {}).get("turk_submit_to") if arrival else None
    if turk_submit_to:
        remembered = dict(request.session.get(PLATFORM_SUBMIT_KEY, {}))
        remembered[str(assignment.public_id)] = turk_submit_to
        request.session[PLATFORM_SUBMIT_KEY] = remembered


def platform_submit_to(request, assignment) -> str:
    return request.session.get(PLATFORM_SUBMIT_KEY, {}).get(str(assignment.public_id), "")
