"""The budget planner and the stopping rule of a campaign in the API:
`GET /api/campaigns/<slug>/plan/` and `GET /api/campaigns/<slug>/stopping/` (its managers).
The arena's views (arenas/api/views.py) read the same query."""

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from evalhub.permissions import IsManager, by_method

from .. import pairing
from ..planning import DEFAULT_STUDIES, MAX_STUDIES, MAX_SYSTEMS, PlanInputs, plan_for_campaign
from .crowd import campaign_for

PLAN_EXAMPLE = {
    "source": "assumed",
    "systems": [{"system": "system 1", "rating": 1100.0}, {"system": "system 2", "rating": 900.0}],
    "tie_rate": 0.1,
    "level": 0.95,
    "studies": 100,
    "max_judgments": 500000,
    "price_per_judgment": "0.1200",
    "provider": "prolific",
    "allocations": {
        "uniform": {
            "judgments_80": 60,
            "judgments_95": 90,
            "cost_80": "7.20",
            "cost_95": "10.80",
            "wrong_order_share": 0.0,
        },
        "adaptive": {
            "judgments_80": 60,
            "judgments_95": 90,
            "cost_80": "7.20",
            "cost_95": "10.80",
            "wrong_order_share": 0.0,
        },
    },
}


STOPPING_EXAMPLE = {
    "level": 0.95,
    "judgments": 120,
    "adjacent_pairs": 2,
    "separated_pairs": 1,
    "answered": False,
    "order": ["gpt-4", "vicuna-13b", "alpaca-13b"],
}


class PlanQuerySerializer(serializers.Serializer):
    pilot = serializers.BooleanField(
        default=False, help_text="Plan from the judgments so far instead of an assumed spread."
    )
    systems = serializers.IntegerField(required=False, min_value=2, max_value=MAX_SYSTEMS)
    spread_elo = serializers.FloatField(
        required=False,
        min_value=1.0,
        max_value=2000.0,
        help_text="Best minus worst system, in Elo points (400 = 10:1 odds).",
    )
    tie_rate = serializers.FloatField(required=False, min_value=0.0, max_value=0.95)
    level = serializers.FloatField(default=0.95, min_value=0.5, max_value=0.999)
    studies = serializers.IntegerField(default=DEFAULT_STUDIES, min_value=10, max_value=MAX_STUDIES)

    def inputs(self) -> PlanInputs:
        return PlanInputs.from_cleaned(self.validated_data)


class PlanSerializer(serializers.Serializer):
    source = serializers.CharField()
    systems = serializers.ListField(child=serializers.DictField())
    tie_rate = serializers.FloatField()
    level = serializers.FloatField()
    studies = serializers.IntegerField()
    max_judgments = serializers.IntegerField()
    price_per_judgment = serializers.CharField(allow_null=True)
    provider = serializers.CharField()
    allocations = serializers.DictField()


class StoppingSerializer(serializers.Serializer):
    level = serializers.FloatField()
    judgments = serializers.IntegerField()
    adjacent_pairs = serializers.IntegerField()
    separated_pairs = serializers.IntegerField()
    answered = serializers.BooleanField()
    order = serializers.ListField(child=serializers.CharField(), required=False)


class CampaignPlan(APIView):
    """Judgments (and money) needed to separate the systems, uniform and adaptive."""

    permission_classes = [by_method(GET=IsManager)]

    @extend_schema(
        summary="Budget planner",
        parameters=[PlanQuerySerializer],
        responses={200: PlanSerializer},
        examples=[OpenApiExample("Two systems", value=PLAN_EXAMPLE, response_only=True)],
    )
    def get(self, request, slug):
        campaign = campaign_for(self, request, slug)
        query = PlanQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        return Response(plan_for_campaign(campaign, query.inputs()))


class CampaignStopping(APIView):
    """Is the ranking question answered (every adjacent pair separated)?"""

    permission_classes = [by_method(GET=IsManager)]

    @extend_schema(
        summary="Stopping rule",
        responses={200: StoppingSerializer},
        examples=[OpenApiExample("Open", value=STOPPING_EXAMPLE, response_only=True)],
    )
    def get(self, request, slug):
        campaign = campaign_for(self, request, slug)
        status = pairing.stopping_status(campaign)
        if status is None:
            from ..planning import PlanRefused

            raise PlanRefused("The stopping rule serves A/B and comparative campaigns.")
        return Response(StoppingSerializer(status).data)
