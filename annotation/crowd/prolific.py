"""Prolific through its REST API (https://docs.prolific.com/api-reference), with one
httpx client (timeouts, `Authorization: Token ...`) and tenacity retries.

A campaign is one study: `total_available_places` = batches x redundancy (one submission
per participant), the reward per batch in the currency's minor unit, and an
`external_study_url` under EVALHUB_PUBLIC_URL that carries PROLIFIC_PID, STUDY_ID and
SESSION_ID. A submission is matched to its EvalHub assignment by SESSION_ID, which is
Prolific's submission id and is kept as `Assignment.provider_ref`.

Submission changes reach EvalHub two ways, through one code path (`apply_submission`):
Prolific's `submission.status.change` hook, subscribed for the workspace at launch when
EVALHUB_PROLIFIC_WORKSPACE_ID and EVALHUB_PROLIFIC_HOOK_SECRET are set, brings them within
seconds; the periodic sync (EVALHUB_CROWD_SYNC_SECONDS) stays as the fallback for an event
that was lost or refused. Each step is a conditional update from the status it leaves, so
the same submission in the same status is handled once whichever way, or how often, it
arrives.
"""

import base64
import contextlib
import hashlib
import hmac
import logging
import re
import secrets
import statistics
from datetime import timedelta
from decimal import Decimal

import httpx
from django.conf import settings
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from tenacity import (
    RetryCallState,
    retry,
    retry_if_exception,
    stop_after_attempt,
)

from ..models import Assignment
from .base import (
    Arrival,
    BadArrival,
    ConfirmationRequired,
    CostEstimate,
    CrowdError,
    PlatformRefused,
    SyncReport,
    money,
)
from .common import public_url, start_path
from .ledger import once
from .local import LocalProvider, refuse_other_platforms

log = logging.getLogger(__name__)

COMPLETE_URL = "https://app.prolific.com/submissions/complete?cc={code}"
PARTICIPANT_PARAMS = {
    "PROLIFIC_PID": "{{%PROLIFIC_PID%}}",
    "STUDY_ID": "{{%STUDY_ID%}}",
    "SESSION_ID": "{{%SESSION_ID%}}",
}
# Prolific's participant, study and submission (SESSION_ID) ids are 24 hexadecimal digits
# (MongoDB object ids). Checked at arrival: they become database keys and export cells.
PROLIFIC_ID = re.compile(r"^[0-9a-f]{24}$")
PLAIN_ID = re.compile(r"^[0-9A-Za-z]{1,64}$")
MIN_REJECTION_MESSAGE = 100  # Prolific refuses shorter rejection messages
UNMATCHED_REJECTION = (
    "No finished task of this study was recorded for your submission: the batch behind "
    "this Prolific session was never completed, so the completion code was not earned here. "
    "If you think this is a mistake, message us through Prolific."
)


HOOK_EVENT = "submission.status.change"


class HookRefused(Exception):
    """A hook request that is not Prolific's: unsigned, signed with another secret, or
    outside the timestamp window. The message says which, for the API's 403."""


def hook_signature(secret: str, timestamp: str, body: bytes) -> str:
    """Prolific's signature: HMAC-SHA256 of the timestamp followed by the raw body, keyed by
    the workspace's hook secret, base64-encoded."""
    digest = hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()
    return base64.b64encode(digest).decode("ascii")


def verify_hook(body: bytes, signature: str, timestamp: str, *, now: float) -> None:
    """Raise HookRefused unless `signature` is Prolific's for this body and timestamp and the
    timestamp is within EVALHUB_PROLIFIC_HOOK_TOLERANCE seconds of `now` (a replayed
    request, even correctly signed, is refused once that window has passed)."""
    secret = settings.EVALHUB_PROLIFIC_HOOK_SECRET
    if not secret:
        raise HookRefused("Prolific hooks are not configured here (no hook secret).")
    if not signature or not timestamp:
        raise HookRefused(
            "X-Prolific-Request-Signature and X-Prolific-Request-Timestamp are required."
        )
    if not timestamp.isdigit():
        raise HookRefused("X-Prolific-Request-Timestamp is not a UNIX time in seconds.")
    if abs(now - int(timestamp)) > settings.EVALHUB_PROLIFIC_HOOK_TOLERANCE:
        raise HookRefused("X-Prolific-Request-Timestamp is outside the accepted window.")
    expected = hook_signature(secret, timestamp, body)
    # Constant time: the comparison must not tell a forger how much of a guess was right.
    if not hmac.compare_digest(expected.encode(), signature.encode()):
        raise HookRefused("X-Prolific-Request-Signature does not match.")


class Busy(CrowdError):
    """429 or 5xx: Prolific did not do it (429) or may not have (5xx)."""

    def __init__(self, message, retry_after: float | None = None, status: int = 0):
        super().__init__(message)
        self.retry_after = retry_after
        self.status = status


def error_text(response: httpx.Response) -> str:
    """Prolific's error shape: {"error": {"title": ..., "detail": {field: [messages]}}}."""
    try:
        error = response.json().get("error", {})
    except ValueError:
        return response.text[:500]
    detail = error.get("detail")
    if isinstance(detail, dict):
        parts = [
            f"{field}: {' '.join(map(str, msgs if isinstance(msgs, list) else [msgs]))}"
            for field, msgs in detail.items()
        ]
        return f"{error.get('title', 'Error')}: " + "; ".join(parts)
    return f"{error.get('title', 'Error')}: {detail or ''}".strip()


def _wait(state: RetryCallState) -> float:
    error = state.outcome.exception() if state.outcome else None
    base = settings.EVALHUB_CROWD_RETRY_BASE_DELAY
    backoff = base * 2 ** (state.attempt_number - 1)
    if isinstance(error, Busy) and error.retry_after is not None:
        return min(error.retry_after, 60.0)
    return min(backoff, 60.0)


class ProlificAPI:
    """One httpx client; `send` retries 429s always, and 5xx and transport errors only
    for requests that are safe to repeat."""

    def __init__(self, base_url: str, token: str, *, transport=None, sleep=None):
        if not token:
            raise CrowdError("EVALHUB_PROLIFIC_TOKEN is not set.")
        self.http = httpx.Client(
            base_url=base_url.rstrip("/") + "/",
            headers={"Authorization": f"Token {token}", "Accept": "application/json"},
            timeout=httpx.Timeout(settings.EVALHUB_PROLIFIC_TIMEOUT, connect=10.0),
            transport=transport,
        )
        self.sleep = sleep

    def send(
        self, method: str, path: str, *, json=None, params=None, repeatable=True, headers=False
    ):
        """The answer's JSON; with `headers=True`, (JSON, response headers)."""

        def retryable(error: BaseException) -> bool:
            if isinstance(error, Busy):
                return error.status == 429 or repeatable
            return isinstance(error, httpx.TransportError) and repeatable

        kwargs = {}
        if self.sleep is not None:
            kwargs["sleep"] = self.sleep
        sender = retry(
            retry=retry_if_exception(retryable),
            stop=stop_after_attempt(settings.EVALHUB_CROWD_RETRY_ATTEMPTS),
            wait=_wait,
            reraise=True,
            **kwargs,
        )(self._send_once)
        try:
            answer, answer_headers = sender(method, path, json=json, params=params)
        except httpx.TransportError as error:
            raise CrowdError(f"Prolific {method} {path}: {error}") from error
        return (answer, answer_headers) if headers else answer

    def _send_once(self, method, path, *, json=None, params=None):
        response = self.http.request(method, path, json=json, params=params)
        if response.status_code == 429 or response.status_code >= 500:
            retry_after = response.headers.get("Retry-After")
            raise Busy(
                f"Prolific {method} {path}: {response.status_code} {error_text(response)}",
                float(retry_after) if retry_after and retry_after.isdigit() else None,
                response.status_code,
            )
        if response.status_code >= 400:
            raise PlatformRefused(
                f"Prolific {method} {path}: {response.status_code} {error_text(response)}"
            )
        return (response.json() if response.content else {}), response.headers

    def pages(self, path: str, params: dict):
        """Every result of a paginated list (20 per page unless asked otherwise)."""
        answer = self.send("GET", path, params=params)
        while True:
            yield from answer.get("results", [])
            following = ((answer.get("_links") or {}).get("next") or {}).get("href")
            if not following:
                return
            answer = self.send("GET", following)


class ProlificProvider(LocalProvider):
    key = "prolific"
    spends_money = True
    allows_more_batches = False

    def identify(self, request) -> Arrival | None:
        """A participant Prolific sends (PROLIFIC_PID, STUDY_ID, SESSION_ID, each in
        Prolific's id format), or whoever the shared link names."""
        refuse_other_platforms(request, own="Prolific")
        params = request.GET
        pid = params.get("PROLIFIC_PID", "").strip()
        if not pid:
            return self.identify_on_link(request)
        session_id = params.get("SESSION_ID", "").strip()
        study_id = params.get("STUDY_ID", "").strip()
        for name, value in (("PROLIFIC_PID", pid), ("SESSION_ID", session_id)):
            if value and not PROLIFIC_ID.match(value):
                raise BadArrival(
                    _("%(name)s is not a Prolific id (24 hexadecimal digits).") % {"name": name}
                )
        # STUDY_ID is only compared with the campaign's own study (visibility.py), never
        # stored: letters and digits are enough.
        if study_id and not PLAIN_ID.match(study_id):
            raise BadArrival(_("%(name)s is not a Prolific id.") % {"name": "STUDY_ID"})
        return Arrival("prolific", pid, {"study_id": study_id, "session_id": session_id})

    def __init__(self, transport=None, sleep=None):
        self._transport = transport
        self._sleep = sleep
        self._api = None

    @property
    def api(self) -> ProlificAPI:
        where = (settings.EVALHUB_PROLIFIC_API_URL, settings.EVALHUB_PROLIFIC_TOKEN)
        if self._api is None or self._api[0] != where:
            client = ProlificAPI(*where, transport=self._transport, sleep=self._sleep)
            self._api = (where, client)
        return self._api[1]

    # -- what the participant sees -------------------------------------------------------

    def completion_code(self, campaign) -> str:
        code = self.config(campaign).get("completion_code")
        if not code:
            code = secrets.token_hex(4).upper()
            self._save_config(campaign, completion_code=code)
        return code

    def completion_url(self, campaign, assignment) -> str | None:
        code = self.config(campaign).get("completion_code")
        return (
            COMPLETE_URL.format(code=code) if code else super().completion_url(campaign, assignment)
        )

    # -- cost and launch -----------------------------------------------------------------

    @staticmethod
    def minor_units(amount) -> int:
        return int(money(amount) * 100)

    def estimate(self, campaign) -> CostEstimate:
        places = campaign.batches.count() * campaign.redundancy
        reward = money(campaign.reward_per_batch)
        rewards = money(reward * places)
        fee = Decimal(str(settings.EVALHUB_PROLIFIC_SERVICE_FEE))
        currency = self.config(campaign).get("currency", "GBP")
        return CostEstimate(currency, places, reward, rewards, money(rewards * fee))

    def minutes_per_batch(self, campaign) -> int:
        """The configured time per batch, else the median measured one, else a quarter
        of the time limit."""
        configured = self.config(campaign).get("minutes_per_batch")
        if configured:
            return max(1, int(configured))
        durations = [
            (done - started).total_seconds() / 60
            for started, done in Assignment.objects.filter(
                campaign=campaign, status__in=Assignment.DONE, started_at__isnull=False
            ).values_list("started_at", "submitted_at")[:500]
            if done
        ]
        if durations:
            return max(1, round(statistics.median(durations)))
        return max(1, campaign.time_limit_minutes // 4)

    def study_body(self, campaign) -> dict:
        config = self.config(campaign)
        body = {
            "name": campaign.title,
            "internal_name": f"EvalHub {campaign.slug}",
            "description": config.get("description") or campaign.instructions or campaign.title,
            "external_study_url": public_url(start_path(campaign), PARTICIPANT_PARAMS),
            "prolific_id_option": "url_parameters",
            "completion_codes": [
                {
                    "code": self.completion_code(campaign),
                    "code_type": "COMPLETED",
                    "actions": [{"action": "MANUALLY_REVIEW"}],
                }
            ],
            "total_available_places": campaign.batches.count() * campaign.redundancy,
            "estimated_completion_time": self.minutes_per_batch(campaign),
            "maximum_allowed_time": campaign.time_limit_minutes,
            "reward": self.minor_units(campaign.reward_per_batch),
            "device_compatibility": config.get("device_compatibility", ["desktop"]),
        }
        if config.get("project_id"):
            body["project"] = config["project_id"]
        if config.get("block_group_id"):
            body["filters"] = [
                {
                    "filter_id": "participant_group_blocklist",
                    "selected_values": [config["block_group_id"]],
                }
            ]
        return body

    def launch(self, campaign, *, actor=None, confirm: bool = False) -> None:
        if campaign.status == campaign.Status.PAUSED and campaign.platform_ref:
            self._transition(campaign, "START", actor=actor)
            return
        if not confirm:
            raise ConfirmationRequired(
                "Publishing a Prolific study pays real money: confirm it "
                f"({'; '.join(self.estimate(campaign).lines())})."
            )
        if self.minor_units(campaign.reward_per_batch) <= 0:
            raise CrowdError("A Prolific study needs a reward per batch above 0.")
        study_id = campaign.platform_ref or self.create_study(campaign, actor=actor)
        estimate = self.estimate(campaign)
        once(
            campaign=campaign,
            action="publish",
            key=f"prolific:publish:{study_id}",
            request={"study": study_id, "action": "PUBLISH"},
            # A repeated PUBLISH is refused by Prolific (the study is already active).
            call=lambda: self.api.send(
                "POST", f"studies/{study_id}/transition/", json={"action": "PUBLISH"}
            ),
            actor=actor,
            amount=estimate.total,
        )
        # The hook only hastens what the sync also does: a launch never fails for it.
        try:
            self.subscribe_hooks()
        except CrowdError as error:
            log.warning("Prolific hook subscription failed, the sync will do: %s", error)

    # -- hooks ---------------------------------------------------------------------------------

    @staticmethod
    def hook_url() -> str:
        return public_url(reverse("api-prolific-hooks"))

    def subscribe_hooks(self) -> str | None:
        """The workspace's subscription to submission status changes, made (and confirmed
        with the X-Hook-Secret Prolific answers) unless one already points here; its id, or
        None when hooks are not configured. A subscription covers every study of the
        workspace, so one serves every campaign."""
        workspace = settings.EVALHUB_PROLIFIC_WORKSPACE_ID
        if not workspace or not settings.EVALHUB_PROLIFIC_HOOK_SECRET:
            return None
        target = self.hook_url()
        for subscription in self.api.pages("hooks/subscriptions/", {"workspace_id": workspace}):
            if (
                subscription.get("event_type") == HOOK_EVENT
                and subscription.get("target_url") == target
                and subscription.get("is_enabled")
            ):
                return subscription["id"]
        body = {"event_type": HOOK_EVENT, "target_url": target, "workspace_id": workspace}
        created, headers = self.api.send(
            "POST", "hooks/subscriptions/", json=body, repeatable=False, headers=True
        )
        confirmation = headers.get("X-Hook-Secret")
        if not confirmation:
            raise CrowdError("Prolific created the hook subscription without an X-Hook-Secret.")
        self.api.send(
            "POST", f"hooks/subscriptions/{created['id']}/", json={"secret": confirmation}
        )
        return created["id"]

    def receive_hook(self, event: dict, *, now=None):
        """Apply one `submission.status.change` event exactly as the sync applies the same
        submission; (the campaign, what changed), or (None, an empty report) for an event
        of another type or a submission no EvalHub assignment carries (the sync, which
        reads each study's submissions, deals with those)."""
        report = SyncReport()
        if event.get("event_type") != HOOK_EVENT:
            return None, report
        submission_id = str(event.get("resource_id") or "")
        assignment = (
            Assignment.objects.filter(campaign__provider="prolific", provider_ref=submission_id)
            .exclude(provider_ref="")
            .select_related("campaign", "worker")
            .first()
        )
        if assignment is None:
            report.unmatched.append(submission_id)
            return None, report
        submission = {
            "id": submission_id,
            "participant_id": str(event.get("participant_id") or ""),
            "status": str(event.get("status") or ""),
        }
        self.apply_submission(
            assignment.campaign, submission, assignment, report, now or timezone.now(), None
        )
        return assignment.campaign, report

    def create_study(self, campaign, *, actor=None) -> str:
        body = self.study_body(campaign)
        # A draft study costs nothing; a repeated create leaves at most a spare draft.
        study = once(
            campaign=campaign,
            action="create_study",
            key=f"prolific:study:{campaign.pk}:{campaign.slug}",
            request=body,
            call=lambda: self.api.send("POST", "studies/", json=body, repeatable=False),
            actor=actor,
        )
        type(campaign).objects.filter(pk=campaign.pk).update(platform_ref=study["id"])
        campaign.platform_ref = study["id"]
        return study["id"]

    def _transition(self, campaign, action: str, *, actor=None) -> None:
        if not campaign.platform_ref:
            return
        self.api.send(
            "POST", f"studies/{campaign.platform_ref}/transition/", json={"action": action}
        )

    def pause(self, campaign, *, actor=None) -> None:
        self._transition(campaign, "PAUSE", actor=actor)

    def finish(self, campaign, *, actor=None) -> None:
        self._transition(campaign, "STOP", actor=actor)

    # -- sync and review -------------------------------------------------------------------

    def submissions(self, campaign):
        return self.api.pages("submissions/", {"study": campaign.platform_ref})

    def sync(self, campaign, *, actor=None, now=None) -> SyncReport:
        """Every page of the study's submissions, each matched to its assignment by
        SESSION_ID. A participant who returned or timed out frees their slot for someone
        else. A submission awaiting review with no finished assignment behind it (a shared
        completion code, a study preview) is rejected on Prolific and listed in
        `unmatched`, never approved."""
        now = now or timezone.now()
        report = SyncReport()
        if not campaign.platform_ref:
            return report
        remote = list(self.submissions(campaign))
        local = {
            a.provider_ref: a
            for a in Assignment.objects.filter(
                campaign=campaign, provider_ref__in=[s["id"] for s in remote]
            )
        }
        for submission in remote:
            self.apply_submission(
                campaign, submission, local.get(submission["id"]), report, now, actor
            )
        self._auto_approve(campaign, now, report, actor)
        return report

    def apply_submission(self, campaign, submission, assignment, report, now, actor) -> None:
        """Move one assignment towards its submission's status on Prolific, counting in
        `report` only what this call changed: the sync and the hook both come here, and a
        status already applied (by either) changes nothing."""
        S = Assignment.Status
        status = submission.get("status", "").upper().replace("-", "_").replace(" ", "_")
        finished = assignment is not None and assignment.status in Assignment.DONE
        if status == "AWAITING_REVIEW" and not finished:
            # The study has one completion code: passed around, it would let anyone
            # submit. No finished work here under this session: rejected on Prolific
            # (once), and listed on the review page.
            self._reject_unmatched(campaign, submission, assignment, actor)
            report.unmatched.append(submission["id"])
            return
        if assignment is None:
            report.unmatched.append(submission["id"])
            return
        if status == "APPROVED":
            report.approved += self._set(assignment, S.APPROVED, now)
        elif status == "REJECTED":
            report.rejected += self._set(assignment, S.REJECTED, now)
        elif status in ("RETURNED", "TIMED_OUT"):
            released = self._release(assignment, S.RETURNED if status == "RETURNED" else S.EXPIRED)
            if status == "RETURNED":
                report.returned += released
            else:
                report.expired += released
        elif status == "AWAITING_REVIEW" and assignment.status == S.SUBMITTED:
            report.submitted += 1

    def _reject_unmatched(self, campaign, submission, assignment, actor) -> None:
        """Reject a submission no finished assignment matches. Prolific needs a message of
        100 characters or more and a category; "NO_DATA": no work reached EvalHub."""
        submission_id = submission["id"]
        body = {
            "action": "REJECT",
            "message": UNMATCHED_REJECTION,
            "rejection_category": "NO_DATA",
        }
        # A refused or failed call is left for the next sync; the ledger shows it.
        with contextlib.suppress(CrowdError):
            once(
                campaign=campaign,
                action="reject_unmatched",
                key=f"prolific:reject-unmatched:{submission_id}",
                request={
                    **body,
                    "submission": submission_id,
                    "participant": submission.get("participant_id", ""),
                },
                call=lambda: self.api.send(
                    "POST", f"submissions/{submission_id}/transition/", json=body
                ),
                actor=actor,
                assignment=assignment,
                worker=assignment.worker if assignment is not None else None,
            )

    @staticmethod
    def _set(assignment, status, now) -> int:
        """1 if the assignment was awaiting review and now has `status`, else 0 (decided
        already, by an earlier event or sync, or never submitted)."""
        return Assignment.objects.filter(
            pk=assignment.pk, status=Assignment.Status.SUBMITTED
        ).update(status=status, reviewed_at=now)

    @staticmethod
    def _release(assignment, status) -> int:
        """The slot goes back to the pool, as an expiry does (allocation.expire_overdue);
        1 if this call released it."""
        with transaction.atomic():
            updated = Assignment.objects.filter(
                pk=assignment.pk, status=Assignment.Status.STARTED
            ).update(status=status)
            if updated:
                Assignment.objects.create(campaign=assignment.campaign, batch=assignment.batch)
        return updated

    def _auto_approve(self, campaign, now, report, actor) -> None:
        hours = self.config(campaign).get("auto_approve_after_hours")
        if not hours:
            return
        due = Assignment.objects.filter(
            campaign=campaign,
            status=Assignment.Status.SUBMITTED,
            submitted_at__lt=now - timedelta(hours=float(hours)),
        ).exclude(provider_ref="")
        for assignment in due.select_related("campaign", "worker"):
            self.approve(assignment, actor=actor)
            report.approved += self._set(assignment, Assignment.Status.APPROVED, now)

    def _submission_call(self, assignment, action: str, body: dict, actor):
        if not assignment.provider_ref:
            raise CrowdError(f"{assignment} has no Prolific submission: nothing to {action}.")
        return once(
            campaign=assignment.campaign,
            action=action,
            key=f"prolific:{action}:{assignment.provider_ref}",
            request=body,
            call=lambda: self.api.send(
                "POST", f"submissions/{assignment.provider_ref}/transition/", json=body
            ),
            actor=actor,
            assignment=assignment,
            worker=assignment.worker,
        )

    def approve(self, assignment, *, actor=None, feedback: str = "") -> None:
        self._submission_call(assignment, "approve", {"action": "APPROVE"}, actor)

    def reject(self, assignment, reason: str, *, actor=None, category: str = "OTHER") -> None:
        if len(reason.strip()) < MIN_REJECTION_MESSAGE:
            raise CrowdError(
                f"Prolific needs a rejection message of at least {MIN_REJECTION_MESSAGE} "
                f"characters (this one has {len(reason.strip())})."
            )
        body = {"action": "REJECT", "message": reason, "rejection_category": category}
        self._submission_call(assignment, "reject", body, actor)

    def bonus(self, assignment, amount: Decimal, reason: str, *, key: str, actor=None) -> None:
        """Set up a bulk bonus for one participant, then pay it. Paying is not idempotent
        on Prolific, so a pay whose answer was lost is never sent again automatically."""
        amount = money(amount)
        if amount <= 0:
            raise CrowdError("A bonus must be above 0.")
        campaign = assignment.campaign
        body = {
            "study_id": campaign.platform_ref,
            "csv_bonuses": f"{assignment.worker.external_id},{amount}\n",
        }
        setup = once(
            campaign=campaign,
            action="bonus_setup",
            key=f"prolific:bonus-setup:{key}",
            request={**body, "reason": reason},
            call=lambda: self.api.send(
                "POST", "submissions/bonus-payments/", json=body, repeatable=False
            ),
            actor=actor,
            assignment=assignment,
            worker=assignment.worker,
        )
        fee = Decimal(str(settings.EVALHUB_PROLIFIC_SERVICE_FEE))
        once(
            campaign=campaign,
            action="bonus",
            key=f"prolific:bonus-pay:{key}",
            request={"bulk_bonus_payment": setup["id"]},
            call=lambda: self.api.send(
                "POST", f"bulk-bonus-payments/{setup['id']}/pay/", repeatable=False
            ),
            actor=actor,
            assignment=assignment,
            worker=assignment.worker,
            amount=money(amount * (1 + fee)),
            safe_to_retry=False,
        )

    # -- workers -----------------------------------------------------------------------------

    def block_group(self, campaign) -> str:
        group = self.config(campaign).get("block_group_id")
        if group:
            return group
        body = {"name": f"EvalHub {campaign.slug}: blocked"}
        if self.config(campaign).get("project_id"):
            body["project_id"] = self.config(campaign)["project_id"]
        answer = self.api.send("POST", "participant-groups/", json=body, repeatable=False)
        self._save_config(campaign, block_group_id=answer["id"])
        return answer["id"]

    def block(self, worker, reason: str, *, campaign, actor=None) -> None:
        """Add the participant to the campaign's block group, which the study (and any
        later one given the same group) filters out."""
        group = self.block_group(campaign)
        self.api.send(
            "POST",
            f"participant-groups/{group}/participants/",
            json={"participant_ids": [worker.external_id]},
        )

    def unblock(self, worker, *, campaign, actor=None) -> None:
        group = self.block_group(campaign)
        self.api.send(
            "DELETE",
            f"participant-groups/{group}/participants/",
            json={"participant_ids": [worker.external_id]},
        )

    def message(self, campaign, workers, subject: str, body: str, *, actor=None) -> None:
        for worker in workers:
            self.api.send(
                "POST",
                "messages/",
                json={
                    "recipient_id": worker.external_id,
                    "study_id": campaign.platform_ref,
                    "body": f"{subject}\n\n{body}" if subject else body,
                },
                repeatable=False,
            )
