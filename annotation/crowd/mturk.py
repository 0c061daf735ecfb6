"""Amazon Mechanical Turk through boto3: the only module that imports boto3 or botocore.

Amazon announced that Mechanical Turk closes permanently on 30 September 2026.

One HIT type per campaign (reward, duration, qualifications) and one HIT per batch whose
question is an ExternalQuestion pointing at the batch's task URL; MaxAssignments is the
campaign's redundancy. Every create and bonus carries a UniqueRequestToken derived from
the campaign and batch (or the bonus's key), so a retried launch never creates a second
HIT and a retried bonus never pays twice; MTurk remembers tokens for 24 hours, and the
ledger (CrowdAction) remembers them for ever.
"""

import hashlib
import re
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from xml.sax.saxutils import escape

from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext as _

from ..models import Assignment, Batch
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

PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"
# MTurk's ids, checked at arrival (they become database keys and export cells): a worker id
# is "A" and uppercase letters and digits (12 to 14 characters in practice), assignment and
# HIT ids uppercase letters and digits (30 in practice). Lengths are kept loose; the
# alphabet, which is what keeps a formula out, is not.
WORKER_ID = re.compile(r"^A[0-9A-Z]{1,63}$")
PLATFORM_REF = re.compile(r"^[0-9A-Z]{1,64}$")

SANDBOX_ENDPOINT = "https://mturk-requester-sandbox.us-east-1.amazonaws.com"
PRODUCTION_ENDPOINT = "https://mturk-requester.us-east-1.amazonaws.com"
SANDBOX_WORKER_SITE = "https://workersandbox.mturk.com"
PRODUCTION_WORKER_SITE = "https://www.mturk.com"

APPROVAL_RATE = "000000000000000000L0"
APPROVED_HITS = "00000000000000000040"
LOCALE = "00000000000000000071"

EXTERNAL_QUESTION_NS = (
    "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2006-07-14/"
    "ExternalQuestion.xsd"
)
# Error codes worth retrying after a pause: the service is busy, not the request wrong.
RETRYABLE = {"ThrottlingException", "Throttling", "ServiceFault", "ServiceUnavailable"}

# Amazon's fee schedule: 20% of rewards, 40% for HITs with 10 or more assignments,
# 20% of bonuses, at least $0.01 per assignment or bonus.
FEE = Decimal("0.20")
FEE_LARGE_HIT = Decimal("0.40")
BONUS_FEE = Decimal("0.20")
MIN_FEE = Decimal("0.01")


def commission(reward: Decimal, max_assignments: int) -> Decimal:
    rate = FEE_LARGE_HIT if max_assignments >= 10 else FEE
    return max(money(reward * rate), MIN_FEE)


def bonus_fee(amount: Decimal) -> Decimal:
    return max(money(amount * BONUS_FEE), MIN_FEE)


def request_token(*parts) -> str:
    """A UniqueRequestToken (at most 64 characters) naming one create or one bonus."""
    return hashlib.sha256(":".join(str(p) for p in parts).encode()).hexdigest()[:64]


def external_question(url: str, frame_height: int = 0) -> str:
    """The ExternalQuestion XML; 0 lets MTurk size the frame to the browser window."""
    return (
        f'<ExternalQuestion xmlns="{EXTERNAL_QUESTION_NS}">'
        f"<ExternalURL>{escape(url)}</ExternalURL>"
        f"<FrameHeight>{int(frame_height)}</FrameHeight>"
        "</ExternalQuestion>"
    )


def external_submit_url(turk_submit_to: str) -> str | None:
    """Where the finished assignment is posted back, if `turkSubmitTo` is MTurk's (never
    an address a crafted link names)."""
    origin = (turk_submit_to or "").rstrip("/")
    if origin in settings.EVALHUB_MTURK_SUBMIT_ORIGINS:
        return f"{origin}/mturk/externalSubmit"
    return None


def make_client(sandbox: bool):
    """A boto3 MTurk client with retries (throttling retried with backoff) and timeouts."""
    # boto3 is imported here and in ``call``, never with this module: the crowd providers
    # are loaded at app start-up by every process (the worker pages name them), and boto3
    # with botocore costs about 0.15 s that only a launch on MTurk needs.
    import boto3
    from botocore.config import Config

    endpoint = settings.EVALHUB_MTURK_ENDPOINT_URL or (
        SANDBOX_ENDPOINT if sandbox else PRODUCTION_ENDPOINT
    )
    config = Config(
        retries={"max_attempts": settings.EVALHUB_CROWD_RETRY_ATTEMPTS, "mode": "adaptive"},
        connect_timeout=10,
        read_timeout=30,
    )
    return boto3.session.Session().client(
        "mturk", region_name="us-east-1", endpoint_url=endpoint, config=config
    )


class MTurkProvider(LocalProvider):
    key = "mturk"
    spends_money = True
    frame_ancestors = ("'self'", SANDBOX_WORKER_SITE, PRODUCTION_WORKER_SITE)

    def __init__(self, client_factory=make_client, sleep=time.sleep):
        self._client_factory = client_factory
        self._sleep = sleep
        self._clients = {}

    def identify(self, request):
        """A worker who accepted the HIT (MTurk adds workerId, assignmentId, hitId and
        turkSubmitTo to the URL, each id in MTurk's format); otherwise whoever the shared
        link names."""
        refuse_other_platforms(request, own="MTurk")
        params = request.GET
        worker_id = params.get("workerId", "").strip()
        assignment_id = params.get("assignmentId", "").strip()
        if not worker_id or not assignment_id or assignment_id == PREVIEW:
            return self.identify_on_link(request)
        hit_id = params.get("hitId", "").strip()
        if not WORKER_ID.match(worker_id):
            raise BadArrival(_("%(name)s is not an MTurk worker id.") % {"name": "workerId"})
        for name, value in (("assignmentId", assignment_id), ("hitId", hit_id)):
            if value and not PLATFORM_REF.match(value):
                raise BadArrival(_("%(name)s is not an MTurk id.") % {"name": name})
        return Arrival(
            "mturk",
            worker_id,
            {
                "assignment_id": assignment_id,
                "hit_id": hit_id,
                "turk_submit_to": params.get("turkSubmitTo", "")[:200],
            },
        )

    # -- plumbing ---------------------------------------------------------------------

    def client(self, campaign):
        sandbox = campaign.platform_sandbox
        if sandbox not in self._clients:
            self._clients[sandbox] = self._client_factory(sandbox)
        return self._clients[sandbox]

    def call(self, campaign, operation: str, **params):
        """One API call; busy-service errors retried with exponential backoff on top of
        botocore's own retries. Any other error is PlatformRefused (nothing was done)."""
        from botocore.exceptions import BotoCoreError, ClientError

        attempts = settings.EVALHUB_CROWD_RETRY_ATTEMPTS
        for attempt in range(1, attempts + 1):
            try:
                return getattr(self.client(campaign), operation)(**params)
            except ClientError as error:
                code = error.response.get("Error", {}).get("Code", "")
                if code in RETRYABLE and attempt < attempts:
                    self._sleep(settings.EVALHUB_CROWD_RETRY_BASE_DELAY * 2 ** (attempt - 1))
                    continue
                message = error.response.get("Error", {}).get("Message", str(error))
                raise PlatformRefused(f"MTurk {operation}: {code}: {message}") from error
            except BotoCoreError as error:
                raise CrowdError(f"MTurk {operation}: {error}") from error
        raise AssertionError("unreachable")

    @staticmethod
    def task_url(batch) -> str:
        return public_url(start_path(batch.campaign), {"provider": "mturk", "batch": batch.pk})

    # -- qualifications -----------------------------------------------------------------

    def _qualification_type(self, campaign, config_key: str, name: str, description: str):
        existing = self.config(campaign).get(config_key)
        if existing:
            return existing
        answer = self.call(
            campaign,
            "create_qualification_type",
            Name=name,
            Keywords="evalhub",
            Description=description,
            QualificationTypeStatus="Active",
        )
        type_id = answer["QualificationType"]["QualificationTypeId"]
        self._save_config(campaign, **{config_key: type_id})
        return type_id

    def block_qualification(self, campaign) -> str:
        return self._qualification_type(
            campaign,
            "block_qualification_type_id",
            f"EvalHub {campaign.slug}: blocked by quality control",
            "Workers holding this qualification may not work on this campaign.",
        )

    def training_qualification(self, campaign) -> str:
        return self._qualification_type(
            campaign,
            "training_qualification_type_id",
            f"EvalHub {campaign.slug}: training passed",
            "Granted to workers who passed this campaign's training.",
        )

    def qualification_requirements(self, campaign) -> list[dict]:
        config = self.config(campaign)
        guarded = "DiscoverPreviewAndAccept"
        requirements = [
            {
                "QualificationTypeId": APPROVAL_RATE,
                "Comparator": "GreaterThanOrEqualTo",
                "IntegerValues": [int(config.get("min_approval_rate", 95))],
                "ActionsGuarded": guarded,
            },
            {
                "QualificationTypeId": APPROVED_HITS,
                "Comparator": "GreaterThanOrEqualTo",
                "IntegerValues": [int(config.get("min_approved_hits", 100))],
                "ActionsGuarded": guarded,
            },
        ]
        if config.get("locales"):
            requirements.append(
                {
                    "QualificationTypeId": LOCALE,
                    "Comparator": "In",
                    "LocaleValues": [{"Country": c} for c in config["locales"]],
                    "ActionsGuarded": guarded,
                }
            )
        if config.get("require_training_qualification"):
            requirements.append(
                {
                    "QualificationTypeId": self.training_qualification(campaign),
                    "Comparator": "Exists",
                    "ActionsGuarded": guarded,
                }
            )
        requirements.append(
            {
                "QualificationTypeId": self.block_qualification(campaign),
                "Comparator": "DoesNotExist",
                "ActionsGuarded": guarded,
            }
        )
        return requirements

    def grant_training(self, worker, *, campaign, actor=None) -> None:
        """Mark on MTurk that the worker passed the campaign's training."""
        type_id = self.training_qualification(campaign)
        self.call(
            campaign,
            "associate_qualification_with_worker",
            QualificationTypeId=type_id,
            WorkerId=worker.external_id,
            IntegerValue=1,
            SendNotification=False,
        )

    # -- cost and launch -------------------------------------------------------------------

    def estimate(self, campaign) -> CostEstimate:
        batches = campaign.batches.count()
        places = batches * campaign.redundancy
        reward = money(campaign.reward_per_batch)
        fees = commission(reward, campaign.redundancy) * places
        balance = self.call(campaign, "get_account_balance")["AvailableBalance"]
        return CostEstimate("USD", places, reward, money(reward * places), fees, Decimal(balance))

    def launch(self, campaign, *, actor=None, confirm: bool = False) -> None:
        if not campaign.platform_sandbox and not confirm:
            raise ConfirmationRequired(
                "Launching on MTurk's production site pays real money: confirm it "
                "(crowd launch --yes, or the confirmation on the campaign page)."
            )
        if float(campaign.reward_per_batch) <= 0:
            raise CrowdError("An MTurk campaign needs a reward per batch above 0.")
        if not campaign.platform_sandbox:
            estimate = self.estimate(campaign)
            if estimate.affordable is False:
                raise CrowdError(
                    "Not enough money on the MTurk account: " + "; ".join(estimate.lines())
                )
        if campaign.status == campaign.Status.PAUSED:  # pausing expired the HITs
            lifetime = int(self.config(campaign).get("lifetime_seconds", 7 * 24 * 3600))
            self._set_expiry(campaign, timezone.now() + timedelta(seconds=lifetime))
        hit_type_id = self.hit_type(campaign, actor=actor)
        for batch in campaign.batches.filter(platform_ref="").order_by("position"):
            self.create_hit(batch, hit_type_id, actor=actor)

    def hit_type(self, campaign, *, actor=None) -> str:
        if campaign.platform_ref:
            return campaign.platform_ref
        config = self.config(campaign)
        params = {
            "AutoApprovalDelayInSeconds": int(config.get("auto_approval_seconds", 3 * 24 * 3600)),
            "AssignmentDurationInSeconds": campaign.time_limit_minutes * 60,
            "Reward": str(money(campaign.reward_per_batch)),
            "Title": campaign.title[:128],
            "Keywords": config.get("keywords", "chatbot, evaluation, dialogue"),
            "Description": (config.get("description") or campaign.title)[:2000],
            "QualificationRequirements": self.qualification_requirements(campaign),
        }
        answer = self.call(campaign, "create_hit_type", **params)
        hit_type_id = answer["HITTypeId"]
        type(campaign).objects.filter(pk=campaign.pk).update(platform_ref=hit_type_id)
        campaign.platform_ref = hit_type_id
        return hit_type_id

    def create_hit(self, batch, hit_type_id: str, *, actor=None) -> str:
        campaign = batch.campaign
        config = self.config(campaign)
        token = request_token("evalhub-hit", campaign.pk, campaign.slug, batch.pk)
        params = {
            "HITTypeId": hit_type_id,
            "MaxAssignments": campaign.redundancy,
            "LifetimeInSeconds": int(config.get("lifetime_seconds", 7 * 24 * 3600)),
            "Question": external_question(self.task_url(batch), config.get("frame_height", 0)),
            "RequesterAnnotation": str(batch.pk),
            "UniqueRequestToken": token,
        }

        def create():
            try:
                return self.call(campaign, "create_hit_with_hit_type", **params)["HIT"]
            except PlatformRefused as refused:
                # Our earlier attempt reached MTurk but its answer did not reach us.
                if "token" in str(refused).lower() and "already" in str(refused).lower():
                    return self.find_hit(campaign, hit_type_id, batch)
                raise

        hit = once(
            campaign=campaign,
            action="create_hit",
            key=f"mturk:{token}",
            request=params,
            call=create,
            actor=actor,
            amount=(
                money(campaign.reward_per_batch)
                + commission(money(campaign.reward_per_batch), campaign.redundancy)
            )
            * campaign.redundancy,
        )
        Batch.objects.filter(pk=batch.pk).update(platform_ref=hit["HITId"])
        batch.platform_ref = hit["HITId"]
        return hit["HITId"]

    def find_hit(self, campaign, hit_type_id: str, batch) -> dict:
        params = {"MaxResults": 100}
        while True:
            page = self.call(campaign, "list_hits", **params)
            for hit in page.get("HITs", []):
                if hit.get("HITTypeId") == hit_type_id and hit.get("RequesterAnnotation") == str(
                    batch.pk
                ):
                    return hit
            if not page.get("NextToken"):
                raise CrowdError(f"MTurk says the HIT of {batch} exists but does not list it.")
            params["NextToken"] = page["NextToken"]

    # -- sync and review ---------------------------------------------------------------------

    def assignments_for_hit(self, campaign, hit_id: str):
        params = {
            "HITId": hit_id,
            "MaxResults": 100,
            "AssignmentStatuses": ["Submitted", "Approved", "Rejected"],
        }
        while True:
            page = self.call(campaign, "list_assignments_for_hit", **params)
            yield from page.get("Assignments", [])
            if not page.get("NextToken") or not page.get("Assignments"):
                return
            params["NextToken"] = page["NextToken"]

    def sync(self, campaign, *, actor=None, now=None) -> SyncReport:
        """Read every HIT's assignments; match them by MTurk assignment id. MTurk's own
        auto-approval (AutoApprovalDelayInSeconds) pays what nobody reviewed in time; sync
        records it. Returns and abandons are not listed by MTurk: EvalHub's own time limit
        expires those assignments."""
        now = now or timezone.now()
        report = SyncReport()
        status_map = {
            "Approved": Assignment.Status.APPROVED,
            "Rejected": Assignment.Status.REJECTED,
        }
        for batch in campaign.batches.exclude(platform_ref="").order_by("position"):
            for remote in self.assignments_for_hit(campaign, batch.platform_ref):
                local = Assignment.objects.filter(
                    batch=batch, provider_ref=remote["AssignmentId"]
                ).first()
                if local is None:
                    report.unmatched.append(remote["AssignmentId"])
                    continue
                target = status_map.get(remote["AssignmentStatus"])
                if target and local.status in (
                    Assignment.Status.SUBMITTED,
                    Assignment.Status.STARTED,
                ):
                    Assignment.objects.filter(pk=local.pk).update(status=target, reviewed_at=now)
                    if target == Assignment.Status.APPROVED:
                        report.approved += 1
                    else:
                        report.rejected += 1
                elif remote["AssignmentStatus"] == "Submitted":
                    report.submitted += 1
        return report

    def approve(self, assignment, *, actor=None, feedback: str = "") -> None:
        params = {"AssignmentId": assignment.provider_ref, "OverrideRejection": False}
        if feedback:
            params["RequesterFeedback"] = feedback[:1024]
        self._decide(assignment, "approve", "approve_assignment", params, actor)

    def reject(self, assignment, reason: str, *, actor=None) -> None:
        if not reason.strip():
            raise CrowdError("A rejection needs a reason the worker will read.")
        params = {"AssignmentId": assignment.provider_ref, "RequesterFeedback": reason[:1024]}
        self._decide(assignment, "reject", "reject_assignment", params, actor)

    def _decide(self, assignment, action: str, operation: str, params: dict, actor) -> None:
        """Approve or reject once per MTurk assignment, logged in the ledger."""
        once(
            campaign=assignment.campaign,
            action=action,
            key=f"mturk:{action}:{assignment.provider_ref}",
            request=params,
            call=lambda: self.call(assignment.campaign, operation, **params),
            actor=actor,
            assignment=assignment,
            worker=assignment.worker,
        )

    def bonus(self, assignment, amount: Decimal, reason: str, *, key: str, actor=None) -> None:
        amount = money(amount)
        if amount <= 0:
            raise CrowdError("A bonus must be above 0.")
        if not reason.strip():
            raise CrowdError("A bonus needs a reason the worker will read.")
        token = request_token("evalhub-bonus", key)
        params = {
            "WorkerId": assignment.worker.external_id,
            "BonusAmount": str(amount),
            "AssignmentId": assignment.provider_ref,
            "Reason": reason,
            "UniqueRequestToken": token,
        }
        once(
            campaign=assignment.campaign,
            action="bonus",
            key=f"mturk:bonus:{token}",
            request=params,
            call=lambda: self.call(assignment.campaign, "send_bonus", **params),
            actor=actor,
            assignment=assignment,
            worker=assignment.worker,
            amount=amount + bonus_fee(amount),
        )

    # -- workers ------------------------------------------------------------------------------

    def block(self, worker, reason: str, *, campaign, actor=None, hard: bool = False) -> None:
        """A soft block (the campaign's block qualification, DoesNotExist in the HIT type)
        by default; `hard` uses create_worker_block, which counts against the worker's
        standing on MTurk: keep it for abuse."""
        if hard:
            self.call(campaign, "create_worker_block", WorkerId=worker.external_id, Reason=reason)
        else:
            self.call(
                campaign,
                "associate_qualification_with_worker",
                QualificationTypeId=self.block_qualification(campaign),
                WorkerId=worker.external_id,
                IntegerValue=1,
                SendNotification=False,
            )

    def unblock(
        self, worker, *, campaign, actor=None, hard: bool = False, reason: str = ""
    ) -> None:
        if hard:
            self.call(
                campaign,
                "delete_worker_block",
                WorkerId=worker.external_id,
                Reason=reason or "Unblocked",
            )
        else:
            self.call(
                campaign,
                "disassociate_qualification_from_worker",
                QualificationTypeId=self.block_qualification(campaign),
                WorkerId=worker.external_id,
                Reason=reason or "Unblocked",
            )

    def message(self, campaign, workers, subject: str, body: str, *, actor=None) -> None:
        ids = [w.external_id for w in workers]
        for start in range(0, len(ids), 100):  # notify_workers takes at most 100 ids
            answer = self.call(
                campaign,
                "notify_workers",
                Subject=subject[:200],
                MessageText=body[:4096],
                WorkerIds=ids[start : start + 100],
            )
            failures = answer.get("NotifyWorkersFailureStatuses") or []
            if failures:
                raise CrowdError(
                    "MTurk could not notify: "
                    + ", ".join(
                        f"{f['WorkerId']} ({f['NotifyWorkersFailureMessage']})" for f in failures
                    )
                )

    # -- the end -------------------------------------------------------------------------

    def _set_expiry(self, campaign, when) -> None:
        for batch in campaign.batches.exclude(platform_ref="").order_by("position"):
            self.call(
                campaign, "update_expiration_for_hit", HITId=batch.platform_ref, ExpireAt=when
            )

    def _expire(self, campaign) -> None:
        # A time in the past expires a HIT at once.
        self._set_expiry(campaign, datetime.fromtimestamp(0, UTC))

    def pause(self, campaign, *, actor=None) -> None:
        self._expire(campaign)

    def finish(self, campaign, *, actor=None) -> None:
        """Expire every HIT: no new worker can accept; submitted work can still be reviewed."""
        self._expire(campaign)

    def cleanup(self, campaign, *, actor=None) -> None:
        """Delete HITs that are expired and fully reviewed (MTurk refuses the others)."""
        for batch in campaign.batches.exclude(platform_ref="").order_by("position"):
            self.call(campaign, "delete_hit", HITId=batch.platform_ref)
