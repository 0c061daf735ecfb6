"""REST API of a campaign on its crowd platform, and of launch approval.

Under `/api/campaigns/<slug>/`:

- `crowd/estimate/` GET (staff or owner): the cost on the platform and the account balance.
- `crowd/launch/` POST (staff; the owner once staff approved, or when it pays nobody):
  `{"provider"?, "sandbox"?, "confirm"}`; a campaign running on its link keeps it and
  gains the platform. Spending real money needs `"confirm": true`.
- `crowd/sync/`, `crowd/pay/` (`{"confirm"}`), `crowd/finish/` POST (staff).
- `crowd/review/` GET (staff): submitted assignments with their worker's quality figures;
  POST `{"action": approve|reject|bonus|block, "assignments": [ids], "reason", "amount",
  "key"}` decides for each (a reason is required to reject, pay a bonus or block; `key`
  names a bonus round so a retried call never pays twice).
- `launch-request/` GET (staff or owner): the latest request; POST (owner or staff,
  `{"provider"?, "sandbox"?}`): ask staff to launch a campaign that pays crowdworkers.
- `launch-request/decision/` POST (staff): `{"approve": true}` launches it;
  `{"approve": false, "reason": "..."}` declines it.

Errors, all in the one shape (`{"errors": [...], "error_count": N}`): 400; 403 to who may see
the campaign but not act on it; 404 to who may not see it (a private campaign, as if it did
not exist).
"""

from dataclasses import replace

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_view
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from evalhub import limits
from evalhub.api.serializers import InputErrorsSerializer
from evalhub.permissions import IsManager, IsStaff, by_method, is_staff

from ..campaigns import (
    TransitionRefused,
    decide_launch,
    finish_on_platform,
    launch_campaign,
    may_launch,
    pays_crowdworkers,
    place_on_platform,
    request_launch,
)
from ..crowd import get_provider
from ..crowd.base import CrowdError
from ..crowd.review import pay_submitted
from ..models import Assignment, Campaign
from ..review_queue import ACTIONS, decide, review_rows

PLATFORM_CHOICES = [Campaign.Provider.MTURK, Campaign.Provider.PROLIFIC]


def campaign_for(view: APIView, request, slug) -> Campaign:
    """The campaign, after the view's declared rule for it: a private campaign answers 404
    to whoever may not see it (as if it did not exist), a public one 403 to whoever may
    see it but not act on it."""
    campaign = get_object_or_404(Campaign, slug=slug)
    view.check_object_permissions(request, campaign)
    return campaign


def crowd_errors(call):
    """A platform's refusal is the user's to fix: answered as a 400 in the one shape."""
    try:
        return call()
    except CrowdError as refused:
        raise TransitionRefused(str(refused)) from refused


class CrowdCampaignStateSerializer(serializers.Serializer):
    slug = serializers.SlugField()
    status = serializers.CharField()
    provider = serializers.CharField()
    platform_sandbox = serializers.BooleanField()
    platform_ref = serializers.CharField()

    @staticmethod
    def of(campaign):
        return CrowdCampaignStateSerializer(campaign).data


class CrowdEstimateSerializer(serializers.Serializer):
    provider = serializers.CharField()
    sandbox = serializers.BooleanField()
    currency = serializers.CharField()
    places = serializers.IntegerField()
    reward_per_place = serializers.DecimalField(max_digits=10, decimal_places=2)
    rewards = serializers.DecimalField(max_digits=12, decimal_places=2)
    fees = serializers.DecimalField(max_digits=12, decimal_places=2)
    total = serializers.DecimalField(max_digits=12, decimal_places=2)
    balance = serializers.DecimalField(max_digits=12, decimal_places=2, allow_null=True)
    affordable = serializers.BooleanField(allow_null=True)
    pays_crowdworkers = serializers.BooleanField()


class CrowdPlaceSerializer(serializers.Serializer):
    provider = serializers.ChoiceField(choices=PLATFORM_CHOICES, required=False)
    sandbox = serializers.BooleanField(required=False, allow_null=True, default=None)


class CrowdLaunchSerializer(CrowdPlaceSerializer):
    confirm = serializers.BooleanField(default=False)


class CrowdConfirmSerializer(serializers.Serializer):
    confirm = serializers.BooleanField(default=False)


class CrowdSyncReportSerializer(serializers.Serializer):
    submitted = serializers.IntegerField()
    approved = serializers.IntegerField()
    rejected = serializers.IntegerField()
    returned = serializers.IntegerField()
    expired = serializers.IntegerField()
    unmatched = serializers.ListField(child=serializers.CharField())


class CrowdPaySerializer(serializers.Serializer):
    approved = serializers.IntegerField()


class CrowdFinishSerializer(serializers.Serializer):
    status = serializers.CharField()
    waiting_for_review = serializers.IntegerField()
    cleaned_up = serializers.BooleanField()


class CrowdRateSerializer(serializers.Serializer):
    hits = serializers.IntegerField()
    total = serializers.IntegerField()
    value = serializers.FloatField(allow_null=True)


class CrowdReviewRowSerializer(serializers.Serializer):
    assignment = serializers.UUIDField()
    batch = serializers.IntegerField()
    status = serializers.CharField()
    submitted_at = serializers.DateTimeField(allow_null=True)
    worker = serializers.UUIDField()
    platform = serializers.CharField()
    platform_worker_id = serializers.CharField()
    platform_submission_id = serializers.CharField()
    worker_blocked = serializers.BooleanField()
    judgments = serializers.IntegerField()
    gold = CrowdRateSerializer()
    agreement = CrowdRateSerializer()
    median_seconds = serializers.FloatField(allow_null=True)
    training = serializers.CharField()


def _rate(rate):
    return {"hits": rate.hits, "total": rate.total, "value": rate.value}


def review_row(row) -> dict:
    a, f = row.assignment, row.figures
    return {
        "assignment": a.public_id,
        "batch": a.batch.position,
        "status": a.status,
        "submitted_at": a.submitted_at,
        "worker": a.worker.public_id,
        "platform": a.worker.provider,
        "platform_worker_id": a.worker.external_id,
        "platform_submission_id": a.provider_ref,
        "worker_blocked": a.worker.blocked,
        "judgments": f.judgments if f else 0,
        "gold": _rate(f.gold) if f else {"hits": 0, "total": 0, "value": None},
        "agreement": _rate(f.agreement) if f else {"hits": 0, "total": 0, "value": None},
        "median_seconds": f.median_seconds if f else None,
        "training": row.training,
    }


class CrowdReviewDecisionSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=ACTIONS)
    assignments = serializers.ListField(
        child=serializers.UUIDField(), min_length=1, max_length=1000
    )
    reason = serializers.CharField(
        required=False, allow_blank=True, max_length=limits.REASON_CHARS, default=""
    )
    amount = serializers.DecimalField(
        required=False, max_digits=6, decimal_places=2, min_value=0, allow_null=True
    )
    key = serializers.CharField(required=False, allow_blank=True, max_length=100, default="")


class CrowdReviewFailureSerializer(serializers.Serializer):
    assignment = serializers.UUIDField()
    message = serializers.CharField()


class CrowdReviewOutcomeSerializer(serializers.Serializer):
    done = serializers.ListField(child=serializers.UUIDField())
    failed = CrowdReviewFailureSerializer(many=True)


class LaunchApprovalSerializer(serializers.Serializer):
    campaign = serializers.CharField(source="campaign.slug")
    provider = serializers.CharField()
    platform_sandbox = serializers.BooleanField()
    reward_per_batch = serializers.DecimalField(max_digits=8, decimal_places=2)
    places = serializers.IntegerField()
    state = serializers.CharField()
    requested_by = serializers.CharField(source="requested_by.username", allow_null=True)
    requested_at = serializers.DateTimeField()
    decided_by = serializers.CharField(source="decided_by.username", allow_null=True)
    decided_at = serializers.DateTimeField(allow_null=True)
    reason = serializers.CharField()
    campaign_status = serializers.CharField(source="campaign.status")


class LaunchDecisionSerializer(serializers.Serializer):
    approve = serializers.BooleanField()
    reason = serializers.CharField(
        required=False, allow_blank=True, max_length=limits.REASON_CHARS, default=""
    )


ERRORS = {400: InputErrorsSerializer}


def _out(name, value, code="200"):
    return OpenApiExample(name, value=value, response_only=True, status_codes=[code])


def _in(name, value):
    return OpenApiExample(name, value=value, request_only=True)


def _refused(field, message):
    return OpenApiExample(
        "Refused",
        value={"errors": [{"field": field, "message": message}], "error_count": 1},
        response_only=True,
        status_codes=["400"],
    )


STATE = {
    "slug": "dbdc-ab",
    "status": "live",
    "provider": "prolific",
    "platform_sandbox": False,
    "platform_ref": "65a1f0c2e4b0a1b2c3d4e5f6",
}
APPROVAL = {
    "campaign": "dbdc-ab",
    "provider": "prolific",
    "platform_sandbox": False,
    "reward_per_batch": "1.50",
    "places": 40,
    "state": "pending",
    "requested_by": "alice",
    "requested_at": "2026-11-20T09:30:00Z",
    "decided_by": None,
    "decided_at": None,
    "reason": "",
    "campaign_status": "draft",
}
APPROVED = {
    **APPROVAL,
    "state": "approved",
    "decided_by": "admin",
    "decided_at": "2026-11-20T11:00:00Z",
    "reason": "Budget agreed.",
}
ASSIGNMENT = "0b7e6a52-1c1d-4c8e-9a4f-2d3e4f5a6b7c"


@extend_schema_view(
    get=extend_schema(
        examples=[
            _out(
                "Prolific estimate",
                {
                    "provider": "prolific",
                    "sandbox": False,
                    "currency": "GBP",
                    "places": 40,
                    "reward_per_place": "1.50",
                    "rewards": "60.00",
                    "fees": "20.00",
                    "total": "80.00",
                    "balance": "250.00",
                    "affordable": True,
                    "pays_crowdworkers": True,
                },
            ),
            _refused("provider", "This campaign runs on no crowd platform."),
        ]
    )
)
class CrowdEstimate(APIView):
    permission_classes = [by_method(GET=IsManager)]

    @extend_schema(responses={200: CrowdEstimateSerializer, **ERRORS})
    def get(self, request, slug):
        campaign = campaign_for(self, request, slug)
        estimate = crowd_errors(lambda: get_provider(campaign.provider).estimate(campaign))
        if not is_staff(request.user):  # the platform account is the operator's
            estimate = replace(estimate, balance=None)
        body = {
            "provider": campaign.provider,
            "sandbox": campaign.platform_sandbox,
            "currency": estimate.currency,
            "places": estimate.places,
            "reward_per_place": estimate.reward_per_place,
            "rewards": estimate.rewards,
            "fees": estimate.fees,
            "total": estimate.total,
            "balance": estimate.balance,
            "affordable": estimate.affordable,
            "pays_crowdworkers": pays_crowdworkers(campaign),
        }
        return Response(CrowdEstimateSerializer(body).data)


@extend_schema_view(
    post=extend_schema(
        examples=[
            _in("Launch on Prolific", {"provider": "prolific", "sandbox": False, "confirm": True}),
            _out("Live", STATE),
            _refused("confirm", "Confirm the cost: send confirm=true."),
        ]
    )
)
class CrowdLaunch(APIView):
    permission_classes = [by_method(POST=IsManager)]

    @extend_schema(
        request=CrowdLaunchSerializer, responses={200: CrowdCampaignStateSerializer, **ERRORS}
    )
    def post(self, request, slug):
        campaign = campaign_for(self, request, slug)
        data = _valid(CrowdLaunchSerializer, request)
        with transaction.atomic():  # a refused launch leaves the campaign where it was
            campaign = place_on_platform(campaign, data.get("provider"), data["sandbox"])
            if not may_launch(request.user, campaign):
                raise PermissionDenied(
                    "This campaign pays crowdworkers: request a launch (launch-request/), "
                    "and staff approve it."
                )
        campaign = launch_campaign(campaign, actor=request.user, confirm=data["confirm"])
        return Response(CrowdCampaignStateSerializer.of(campaign))


@extend_schema_view(
    post=extend_schema(
        examples=[
            _out(
                "Synchronised",
                {
                    "submitted": 12,
                    "approved": 20,
                    "rejected": 1,
                    "returned": 2,
                    "expired": 0,
                    "unmatched": [],
                },
            )
        ]
    )
)
class CrowdSync(APIView):
    permission_classes = [by_method(POST=IsStaff)]

    @extend_schema(request=None, responses={200: CrowdSyncReportSerializer, **ERRORS})
    def post(self, request, slug):
        campaign = campaign_for(self, request, slug)
        provider = get_provider(campaign.provider)
        report = crowd_errors(lambda: provider.sync(campaign, actor=request.user))
        return Response(CrowdSyncReportSerializer(report).data)


@extend_schema_view(
    post=extend_schema(
        examples=[_in("Pay submitted work", {"confirm": True}), _out("Paid", {"approved": 12})]
    )
)
class CrowdPay(APIView):
    permission_classes = [by_method(POST=IsStaff)]

    @extend_schema(request=CrowdConfirmSerializer, responses={200: CrowdPaySerializer, **ERRORS})
    def post(self, request, slug):
        campaign = campaign_for(self, request, slug)
        data = _valid(CrowdConfirmSerializer, request)
        waiting = Assignment.objects.filter(
            campaign=campaign, status=Assignment.Status.SUBMITTED
        ).count()
        if waiting and pays_crowdworkers(campaign) and not data["confirm"]:
            raise TransitionRefused(
                f"Approving {waiting} submitted assignments pays real money: confirm it.",
                field="confirm",
            )
        approved = crowd_errors(lambda: pay_submitted(campaign, actor=request.user))
        return Response({"approved": approved})


@extend_schema_view(
    post=extend_schema(
        examples=[
            _out("Finished", {"status": "finished", "waiting_for_review": 0, "cleaned_up": True})
        ]
    )
)
class CrowdFinish(APIView):
    permission_classes = [by_method(POST=IsStaff)]

    @extend_schema(request=None, responses={200: CrowdFinishSerializer, **ERRORS})
    def post(self, request, slug):
        campaign = campaign_for(self, request, slug)
        waiting = finish_on_platform(campaign, actor=request.user)
        campaign.refresh_from_db()
        return Response(
            {"status": campaign.status, "waiting_for_review": waiting, "cleaned_up": not waiting}
        )


@extend_schema_view(
    get=extend_schema(
        examples=[
            _out(
                "Submitted work",
                [
                    {
                        "assignment": ASSIGNMENT,
                        "batch": 3,
                        "status": "submitted",
                        "submitted_at": "2026-11-20T10:12:00Z",
                        "worker": "5d2c1b0a-9f8e-4d7c-8b6a-5f4e3d2c1b0a",
                        "platform": "prolific",
                        "platform_worker_id": "5f3a9c2b1d0e8f7a6b5c4d3e",
                        "platform_submission_id": "6a7b8c9d0e1f2a3b4c5d6e7f",
                        "worker_blocked": False,
                        "judgments": 10,
                        "gold": {"hits": 1, "total": 1, "value": 1.0},
                        "agreement": {"hits": 7, "total": 9, "value": 0.778},
                        "median_seconds": 14.5,
                        "training": "passed",
                    }
                ],
            )
        ]
    ),
    post=extend_schema(
        examples=[
            _in("Approve", {"action": "approve", "assignments": [ASSIGNMENT], "key": "review-1"}),
            _in(
                "Reject with a reason",
                {
                    "action": "reject",
                    "assignments": [ASSIGNMENT],
                    "reason": "Failed both attention checks.",
                    "key": "review-2",
                },
            ),
            _out("Decided", {"done": [ASSIGNMENT], "failed": []}),
            _refused("reason", "A reject needs a reason the worker will read."),
        ]
    ),
)
class CrowdReview(APIView):
    permission_classes = [by_method(GET=IsStaff, POST=IsStaff)]

    @extend_schema(responses={200: CrowdReviewRowSerializer(many=True)})
    def get(self, request, slug):
        campaign = campaign_for(self, request, slug)
        rows = [review_row(r) for r in review_rows(campaign)]
        return Response(CrowdReviewRowSerializer(rows, many=True).data)

    @extend_schema(
        request=CrowdReviewDecisionSerializer,
        responses={200: CrowdReviewOutcomeSerializer, **ERRORS},
    )
    def post(self, request, slug):
        campaign = campaign_for(self, request, slug)
        data = _valid(CrowdReviewDecisionSerializer, request)
        outcome = decide(
            campaign,
            data["assignments"],
            data["action"],
            actor=request.user,
            reason=data["reason"],
            amount=data.get("amount"),
            key=f"api:{request.user.pk}:{data['key']}" if data["key"] else "",
        )
        body = {
            "done": [a.public_id for a in outcome.done],
            "failed": [{"assignment": a.public_id, "message": m} for a, m in outcome.failed],
        }
        return Response(CrowdReviewOutcomeSerializer(body).data)


@extend_schema_view(
    get=extend_schema(examples=[_out("Waiting for staff", APPROVAL)]),
    post=extend_schema(
        examples=[
            _in("Request a Prolific launch", {"provider": "prolific", "sandbox": False}),
            _out("Requested", APPROVAL, "201"),
            _refused("provider", "Choose a crowd platform."),
        ]
    ),
)
class LaunchRequestView(APIView):
    permission_classes = [by_method(GET=IsManager, POST=IsManager)]

    @extend_schema(responses={200: LaunchApprovalSerializer, 404: None})
    def get(self, request, slug):
        campaign = campaign_for(self, request, slug)
        latest = campaign.launch_requests.select_related("requested_by", "decided_by").first()
        if latest is None:
            raise Http404("No launch was requested for this campaign.")
        return Response(LaunchApprovalSerializer(latest).data)

    @extend_schema(
        request=CrowdPlaceSerializer, responses={201: LaunchApprovalSerializer, **ERRORS}
    )
    def post(self, request, slug):
        campaign = campaign_for(self, request, slug)
        data = _valid(CrowdPlaceSerializer, request)
        campaign = place_on_platform(campaign, data.get("provider"), data["sandbox"])
        pending = request_launch(campaign, request.user)
        return Response(LaunchApprovalSerializer(pending).data, status=201)


@extend_schema_view(
    post=extend_schema(
        examples=[
            _in("Approve", {"approve": True, "reason": "Budget agreed."}),
            _out("Approved", APPROVED),
            _refused("reason", "Say why the launch is declined."),
        ]
    )
)
class LaunchDecision(APIView):
    permission_classes = [by_method(POST=IsStaff)]

    @extend_schema(
        request=LaunchDecisionSerializer, responses={200: LaunchApprovalSerializer, **ERRORS}
    )
    def post(self, request, slug):
        campaign = campaign_for(self, request, slug)
        data = _valid(LaunchDecisionSerializer, request)
        decided = decide_launch(campaign, request.user, data["approve"], data["reason"])
        decided.refresh_from_db()
        return Response(LaunchApprovalSerializer(decided).data)


def _valid(serializer_class, request) -> dict:
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data
