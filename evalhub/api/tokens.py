"""The caller's own API tokens: `GET /api/tokens/` lists them (never the tokens themselves:
their first characters, name, dates and last use), `POST /api/tokens/` (`{"name"}`) makes
one and answers it once, `DELETE /api/tokens/<starts_with>/` revokes one. Signed-in users
only; another account's token is "not found" (evalhub/api_tokens.py)."""

from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_view
from rest_framework import generics, serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from ..api_tokens import create_token, live_tokens, revoke_token
from ..models import ApiToken
from ..permissions import SignedIn, by_method


class ApiTokenSerializer(serializers.ModelSerializer):
    starts_with = serializers.CharField(
        source="token_key", read_only=True, help_text="The token's first characters: its name."
    )
    current = serializers.SerializerMethodField(help_text="The token of this request.")

    class Meta:
        model = ApiToken
        fields = ["name", "starts_with", "created", "expiry", "last_used", "current"]
        read_only_fields = ["created", "expiry", "last_used"]

    def get_current(self, token) -> bool:
        auth = getattr(self.context.get("request"), "auth", None)
        return isinstance(auth, ApiToken) and auth.pk == token.pk


class NewApiTokenSerializer(ApiTokenSerializer):
    token = serializers.CharField(read_only=True, help_text="Shown this once, never again.")

    class Meta(ApiTokenSerializer.Meta):
        fields = ["token", *ApiTokenSerializer.Meta.fields]


TOKEN = {
    "name": "laptop scripts",
    "starts_with": "evh_3f5a0c9e1b7",
    "created": "2026-11-20T09:30:00Z",
    "expiry": "2027-02-18T09:30:00Z",
    "last_used": "2026-11-21T14:02:00Z",
    "current": False,
}
NEW = {
    **TOKEN,
    "token": "evh_3f5a0c9e1b7d24c68e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2",
    "last_used": None,
}


@extend_schema_view(
    get=extend_schema(
        examples=[
            OpenApiExample("Tokens", value={"count": 1, "results": [TOKEN]}, response_only=True)
        ]
    ),
    post=extend_schema(
        request=ApiTokenSerializer,
        responses={201: NewApiTokenSerializer},
        examples=[
            OpenApiExample("Name", value={"name": "laptop scripts"}, request_only=True),
            OpenApiExample("Made", value=NEW, response_only=True, status_codes=["201"]),
        ],
    ),
)
class ApiTokenList(generics.ListCreateAPIView):
    serializer_class = ApiTokenSerializer
    permission_classes = [by_method(GET=SignedIn, POST=SignedIn)]
    throttle_scopes = {"post": "token"}  # evalhub/api/throttles.py
    queryset = ApiToken.objects.none()

    def get_queryset(self):
        return live_tokens(self.request.user)

    def create(self, request, *args, **kwargs):
        asked = ApiTokenSerializer(data=request.data)
        asked.is_valid(raise_exception=True)
        made, token = create_token(request.user, asked.validated_data["name"])
        made.token = token
        body = NewApiTokenSerializer(made, context=self.get_serializer_context()).data
        return Response(body, status=status.HTTP_201_CREATED)


class ApiTokenDetail(generics.GenericAPIView):
    permission_classes = [by_method(DELETE=SignedIn)]
    queryset = ApiToken.objects.none()

    @extend_schema(responses={204: None})
    def delete(self, request, starts_with):
        if not revoke_token(request.user, starts_with):
            raise NotFound(f"You have no API token starting {starts_with!r}.")
        return Response(status=status.HTTP_204_NO_CONTENT)
