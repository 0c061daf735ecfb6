"""REST API of tournaments: `GET/POST /api/tournaments/`, `GET /api/tournaments/<slug>/`,
the researcher's steps `POST .../<slug>/collect/`, `.../generate/`, `.../launch/` and
`GET .../<slug>/progress/` (owner or staff), `GET /api/seed-domains/` and
`GET/POST /api/partner-sets/`.

Visibility is the pages' own (`Tournament.objects.visible_to`): published tournaments, the user's
own, all of them for staff. Creating needs a login (token or session).
"""

from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Campaign
from annotation.progress import progress as campaign_progress
from evalhub.hf import api as hf_api
from evalhub.hf.bundle import dataset_response
from evalhub.hf.card import card_options
from evalhub.permissions import Anyone, IsManager, SignedIn, by_method
from evalhub.quotas import check_quota
from evalhub.uniqueness import SlugTaken, unique_slug

from .. import ab_experiment, export_parquet, spot_the_bot_campaign
from ..models import PartnerSet, Tournament
from ..researcher_flow import create_partner_set, request_tournament_launch, seed_domains
from .serializers import (
    ActionSerializer,
    PartnerSetSerializer,
    SeedDomainSerializer,
    TournamentProgressSerializer,
    TournamentSerializer,
)

TOURNAMENT = {
    "slug": "chitchat-2026",
    "name": "Chit-chat tournament 2026",
    "kind": "spot_the_bot",
    "description": "Bipartite-play among four chit-chat systems.",
    "owner": "alice",
    "status": "planning",
    "published": False,
    "campaign": None,
    "created": "2026-11-20T09:30:00Z",
    "domain": "chitchat",
    "systems": ["blender-3b", "kvmemnn", "seq2seq-attn", "dialogpt"],
    "schedule": "bipartite-play",
    "partner_set": {"slug": "chitchat-partners", "version": 1},
    "conversations_per_pair": 4,
    "exchanges": 3,
    "segment_lengths": [2, 3, 5],
    "human_share": 0.2,
    "features": ["fluent", "sensible", "specific"],
    "batch_size": 10,
    "max_batches_per_worker": 5,
    "judgments_per_segment": 3,
    "show_seed": False,
    "included_conversations": [],
    "submission": None,
    "baselines": [],
    "judgments_per_prompt": 3,
    "prompts_per_batch": 10,
    "reward_per_judgment": "0.05",
    "prompt_set": None,
}
TOURNAMENT_IN = {
    k: TOURNAMENT[k]
    for k in ("slug", "name", "kind", "domain", "systems", "schedule", "partner_set", "exchanges")
}
TOURNAMENT_IN["partner_set"] = "chitchat-partners"
PARTNER_SET = {
    "slug": "chitchat-partners",
    "version": 1,
    "name": "Chit-chat partners",
    "description": "The reference bots every new system talks to.",
    "systems": ["blender-3b", "kvmemnn"],
}


def _out(name, value, code="200"):
    return OpenApiExample(name, value=value, response_only=True, status_codes=[code])


def _action(detail, status_, code, campaign=None):
    body = {"message": detail, "status": status_, "campaign": campaign}
    return [_out(detail, body, code)]


@extend_schema_view(
    list=extend_schema(examples=[_out("Tournaments", [TOURNAMENT])]),
    retrieve=extend_schema(examples=[_out("Tournament", TOURNAMENT)]),
    create=extend_schema(
        examples=[
            OpenApiExample("Spot The Bot tournament", value=TOURNAMENT_IN, request_only=True),
            _out("Created", TOURNAMENT, "201"),
        ]
    ),
    collect=extend_schema(examples=_action("Collection started.", "collecting", "202")),
    generate=extend_schema(
        examples=_action(
            "Campaign generated: 48 conversations, 12 human-human controls, 6 batches.",
            "ready",
            "201",
            "chitchat-2026",
        )
    ),
    launch=extend_schema(
        examples=_action("The campaign is live.", "annotating", "200", "chitchat-2026")
        + _action("Launch requested: staff approve it.", "ready", "202", "chitchat-2026")
    ),
    progress=extend_schema(
        examples=[
            _out(
                "Judging",
                {
                    "status": "annotating",
                    "collection": {
                        "pending": 0,
                        "running": 0,
                        "complete": 46,
                        "failed": 2,
                        "total": 48,
                    },
                    "campaign": {
                        "slug": "chitchat-2026",
                        "status": "live",
                        "items_done": 120,
                        "items_needed": 288,
                        "judgments": 360,
                        "judgments_needed": 864,
                    },
                },
            )
        ]
    ),
)
class TournamentViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    viewsets.GenericViewSet,
):
    lookup_field = "slug"
    serializer_class = TournamentSerializer
    filterset_fields = ["kind", "status", "published"]
    search_fields = ["name", "slug", "description"]
    ordering_fields = ["created", "name", "slug"]
    ordering = ["-created"]
    throttle_scopes = {"create": "creations", "generate": "creations"}  # evalhub/api/throttles.py
    # Anybody reads the tournaments they may see (the queryset); anybody signed in creates
    # one; its owner and staff run it.
    permission_classes = [
        by_method(
            GET=Anyone,
            POST=SignedIn,
            progress=IsManager,
            collect=IsManager,
            generate=IsManager,
            launch=IsManager,
            dataset=IsManager,
        )
    ]

    def get_queryset(self):
        return (
            Tournament.objects.visible_to(self.request.user)
            .select_related("owner", "campaign", "partner_set", "prompt_set", "submission")
            .prefetch_related("systems", "baselines")
            .order_by("-created")
        )

    def perform_create(self, serializer):
        check_quota(self.request.user, Tournament)
        slug = serializer.validated_data.get("slug", "")
        try:
            with unique_slug(Tournament, slug):
                serializer.save(owner=self.request.user)
        except SlugTaken as taken:
            raise serializers.ValidationError({"slug": [str(taken)]}) from None

    def _answer(self, tournament: Tournament, detail: str, code=status.HTTP_200_OK):
        tournament.refresh_from_db()
        campaign = tournament.campaign.slug if tournament.campaign_id else None
        body = {"message": detail, "status": tournament.status, "campaign": campaign}
        return Response(body, status=code)

    @extend_schema(request=None, responses={202: ActionSerializer})
    @action(detail=True, methods=["post"])
    def collect(self, request, slug=None):
        """Queue the collection of the planned bot-bot dialogues (owner or staff)."""
        tournament = self.get_object()
        # PlanInvalid and CollectionError are UserInputErrors: the handler answers 400.
        spot_the_bot_campaign.start_collection(tournament)
        return self._answer(tournament, "Collection started.", status.HTTP_202_ACCEPTED)

    @extend_schema(
        summary="Conversations and judgments as a Hugging Face dataset (owner or staff)",
        parameters=hf_api.PARAMETERS,
        responses=hf_api.RESPONSES,
    )
    @action(detail=True, methods=["get"], renderer_classes=hf_api.RENDERERS)
    def dataset(self, request, slug=None):
        tournament = self.get_object()
        license_id, citation = card_options(request.query_params)
        return dataset_response(
            export_parquet.tables(tournament),
            export_parquet.card_text(tournament, license=license_id, citation=citation),
            tournament.slug,
        )

    @extend_schema(responses={200: TournamentProgressSerializer})
    @action(detail=True, methods=["get"])
    def progress(self, request, slug=None):
        """Collected, failed and planned dialogues, and the campaign's judgments so far."""
        tournament = self.get_object()
        campaign = tournament.campaign
        body = {
            "status": tournament.status,
            "collection": spot_the_bot_campaign.collection_progress(tournament),
            "campaign": None
            if campaign is None
            else {"slug": campaign.slug, "status": campaign.status, **_campaign_counts(campaign)},
        }
        return Response(body)

    @extend_schema(request=None, responses={201: ActionSerializer})
    @action(detail=True, methods=["post"])
    def generate(self, request, slug=None):
        """Build the campaign from the collected (or imported) conversations."""
        tournament = self.get_object()
        check_quota(request.user, Campaign)
        if tournament.kind == Tournament.Kind.SPOT_THE_BOT:
            result = spot_the_bot_campaign.generate_campaign(tournament)
            detail = (
                f"Campaign generated: {result.conversations} conversations, "
                f"{result.controls} human-human controls, {result.batches} batches."
            )
        else:
            campaign = ab_experiment.build_campaign(tournament)
            detail = f"Campaign generated: {campaign.batches.count()} batches."
        return self._answer(tournament, detail, status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={200: ActionSerializer, 202: ActionSerializer})
    @action(detail=True, methods=["post"])
    def launch(self, request, slug=None):
        """Launch the campaign, or request its launch where staff approve launches."""
        tournament = self.get_object()
        outcome = request_tournament_launch(tournament, request.user)
        if outcome.launched:
            return self._answer(tournament, "The campaign is live.")
        return self._answer(
            tournament, "Launch requested: staff approve it.", status.HTTP_202_ACCEPTED
        )


def _campaign_counts(campaign) -> dict:
    figures = campaign_progress(campaign)
    return {
        "items_done": figures.items_done,
        "items_needed": figures.items_needed,
        "judgments": figures.judgments,
        "judgments_needed": figures.judgments_needed,
    }


@extend_schema_view(
    get=extend_schema(
        examples=[
            _out(
                "Seed domains",
                [
                    {"domain": "chitchat", "conversations": 250},
                    {"domain": "movies", "conversations": 80},
                ],
            )
        ]
    )
)
class SeedDomainList(APIView):
    """`GET /api/seed-domains/`: the domains a Spot The Bot tournament can collect in."""

    permission_classes = [by_method(GET=Anyone)]

    @extend_schema(responses={200: SeedDomainSerializer(many=True)})
    def get(self, request):
        return Response(seed_domains(request.user))


@extend_schema_view(
    get=extend_schema(examples=[_out("Partner sets", [PARTNER_SET])]),
    post=extend_schema(
        examples=[
            OpenApiExample(
                "New partner set",
                value={k: v for k, v in PARTNER_SET.items() if k != "version"},
                request_only=True,
            ),
            _out("Created", PARTNER_SET, "201"),
        ]
    ),
)
class PartnerSetList(APIView):
    """`GET /api/partner-sets/`: every partner set the caller may see (all versions); `POST`
    (logged in):
    create one of systems you may see."""

    throttle_scopes = {"post": "creations"}  # evalhub/api/throttles.py
    permission_classes = [by_method(GET=Anyone, POST=SignedIn)]

    @extend_schema(responses={200: PartnerSetSerializer(many=True)})
    def get(self, request):
        sets = (
            PartnerSet.objects.visible_to(request.user)
            .prefetch_related("systems")
            .order_by("slug", "-version")
        )
        return Response([PartnerSetSerializer(s).data for s in sets])

    @extend_schema(request=PartnerSetSerializer, responses={201: PartnerSetSerializer})
    def post(self, request):
        given = PartnerSetSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        partner_set = create_partner_set(user=request.user, **given.validated_data)
        return Response(PartnerSetSerializer(partner_set).data, status=status.HTTP_201_CREATED)
