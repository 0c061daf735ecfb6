"""Registering a judge: the judge and its own model endpoint, together (the pages and the
API both come here). A judge is a model, not a chatbot: its endpoint belongs to no system,
so it never appears among the systems, and only the judge's owner and staff manage it."""

from django.db import transaction

from endpoints.models import BotEndpoint
from evalhub.quotas import check_quota

from .models import Judge


def register(*, owner, slug: str, name: str, endpoint: BotEndpoint | dict) -> Judge:
    """A new judge of `owner` with `endpoint` (an unsaved endpoint, or its fields) as its
    own OpenAI-compatible endpoint, named after the judge. The endpoint counts against the
    owner's quota of endpoints (a QuotaExceeded, a UserInputError, when it is full)."""
    if isinstance(endpoint, dict):
        endpoint = BotEndpoint(**endpoint)
    check_quota(owner, BotEndpoint)
    endpoint.system = None
    endpoint.owner = owner
    endpoint.name = name
    endpoint.protocol = BotEndpoint.Protocol.OPENAI
    with transaction.atomic():
        endpoint.save()
        return Judge.objects.create(slug=slug, name=name, owner=owner, endpoint=endpoint)
