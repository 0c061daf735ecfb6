"""A crowd voter's battle pages inside their platform's frame, in their campaign's language.

MTurk shows a HIT's task page in an iframe (its ExternalQuestion), and the campaign's pages
allow its origins (annotation/views/access.py, `framed_by_provider`); the arena's battle
pages, where the campaign's assignment page sends them, must allow the same origins, and
nobody else's. They are worker pages too: they speak the campaign's language
(annotation/language.py) for the voter whose browser holds a batch of the arena's crowd,
and English, as before, for everybody else (the arena's own voters, its researchers)."""

from functools import wraps
from inspect import iscoroutinefunction

from asgiref.sync import sync_to_async
from django.http import Http404
from django.utils import translation

from annotation.crowd import get_provider
from annotation.language import serve_campaign, spoken_response
from annotation.views.access import not_found

from .. import crowd_slots
from ..models import Arena


def crowd_campaign(request, slug):
    """The campaign of the arena's crowd whose batch this browser holds, or None."""
    arena = Arena.objects.filter(slug=slug).first()
    assignment = crowd_slots.crowd_assignment(request.session, arena) if arena else None
    return assignment.campaign if assignment is not None else None


def _framed(request, campaign, response):
    response = spoken_response(request, response)
    provider = get_provider(campaign.provider)
    response._csp_replace = {"frame-ancestors": list(provider.frame_ancestors)}
    response.xframe_options_exempt = True
    return response


def for_crowd(view):
    """Let the crowd voter's platform frame the page and speak their campaign's language
    (the site's policy and language are unchanged for everybody else: no framing,
    English). The previous language is put back after the view."""

    if iscoroutinefunction(view):  # the views that wait on the models

        @wraps(view)
        async def wrapper(request, slug, *args, **kwargs):
            campaign = await sync_to_async(crowd_campaign)(request, slug)
            with translation.override(translation.get_language(), deactivate=True):
                if campaign is None:
                    return await view(request, slug, *args, **kwargs)
                serve_campaign(request, campaign)
                try:
                    response = await view(request, slug, *args, **kwargs)
                except Http404:
                    response = await sync_to_async(not_found)(request)
                return _framed(request, campaign, response)

    else:

        @wraps(view)
        def wrapper(request, slug, *args, **kwargs):
            campaign = crowd_campaign(request, slug)
            with translation.override(translation.get_language(), deactivate=True):
                if campaign is None:
                    return view(request, slug, *args, **kwargs)
                serve_campaign(request, campaign)
                try:
                    response = view(request, slug, *args, **kwargs)
                except Http404:
                    response = not_found(request)  # the worker's 404, in their language
                return _framed(request, campaign, response)

    return wrapper
