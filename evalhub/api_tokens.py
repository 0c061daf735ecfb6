"""API tokens: several per account, each under a name, stored hashed by django-rest-knox,
expiring EVALHUB_API_TOKEN_DAYS after they are made, revoked by deleting them. The token
itself exists only in the answer that makes it: pages and the API show it once.

The account page (evalhub/views/accounts.py), `POST /api/token/` (a username and password)
and `/api/tokens/` (evalhub/api/tokens.py) all make, list and revoke through here.
"""

from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from .errors import UserInputError
from .models import ApiToken


def live_tokens(user) -> QuerySet:
    """The user's tokens that still work, newest first."""
    return ApiToken.objects.filter(user=user, expiry__gt=timezone.now()).order_by("-created")


def create_token(user, name: str, *, replace: bool = False) -> tuple[ApiToken, str]:
    """A new token for `user` under `name`, and the token itself (never stored, never
    shown again). A name the account already uses is refused, or with `replace` that
    token is revoked first (`POST /api/token/`: a script that logs in at every run keeps
    one token, not a pile). Refused too when the name is blank or the account holds the
    most allowed."""
    name = (name or "").strip()
    if not name:
        raise UserInputError("Give the token a name, to tell it from your others.", field="name")
    if len(name) > ApiToken.NAME_CHARS:
        raise UserInputError(
            f"A token's name has at most {ApiToken.NAME_CHARS} characters.", field="name"
        )
    limit = settings.EVALHUB_API_TOKENS_PER_USER
    with transaction.atomic():
        # One account's creations wait for each other, so two at once cannot pass the limit.
        get_user_model().objects.select_for_update().filter(pk=user.pk).first()
        ApiToken.objects.filter(user=user, expiry__lte=timezone.now()).delete()
        same_name = ApiToken.objects.filter(user=user, name=name)
        if replace:
            same_name.delete()
        elif same_name.exists():
            raise UserInputError(
                f"You already have a token named {name!r}: choose another name, or revoke "
                "that one first.",
                field="name",
            )
        if ApiToken.objects.filter(user=user).count() >= limit:
            raise UserInputError(
                f"You hold {limit} API tokens, the most an account may: revoke one you no "
                "longer use first."
            )
        return ApiToken.objects.create(
            user=user, name=name, expiry=timedelta(days=settings.EVALHUB_API_TOKEN_DAYS)
        )


def revoke_token(user, token_key: str) -> int:
    """Revoke the user's token that begins with `token_key` (how the pages name it); how
    many were revoked (0: none of theirs begins so)."""
    deleted, _ = ApiToken.objects.filter(user=user, token_key=token_key).delete()
    return deleted
