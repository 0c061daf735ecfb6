"""A crowd voter's battle pages inside their platform's frame: MTurk shows a HIT's task
page in an iframe (its ExternalQuestion), and the campaign's pages allow its origins
(annotation/views/access.py, `framed_by_provider`); the arena's battle pages, where the
campaign's assignment page sends them, must allow the same origins, and nobody else's."""

from functools import wraps

from annotation.crowd import get_provider

from .. import crowd_slots
from ..models import Arena


def framed_for_crowd(view):
    """Let the crowd voter's platform frame the page (the site's policy is unchanged for
    everybody else: no framing)."""

    @wraps(view)
    def wrapper(request, slug, *args, **kwargs):
        response = view(request, slug, *args, **kwargs)
        arena = Arena.objects.filter(slug=slug).first()
        assignment = crowd_slots.crowd_assignment(request.session, arena) if arena else None
        if assignment is not None:
            provider = get_provider(assignment.campaign.provider)
            response._csp_replace = {"frame-ancestors": list(provider.frame_ancestors)}
            response.xframe_options_exempt = True
        return response

    return wrapper
