"""A crowdworker's hold on a task page: who may frame it, whose assignment it is, and
whether the assignment still takes answers. The item pages (worker.py), the chat stage
(chat.py) and training share these."""

from functools import wraps
from inspect import iscoroutinefunction

from django.http import Http404
from django.utils import timezone
from django.views.decorators.clickjacking import xframe_options_exempt

from ..crowd import get_provider
from ..entry import is_current_worker
from ..hot_queries import assignment_with_campaign_and_worker
from ..models import Assignment


def framed_by_provider(view):
    """Task pages may be framed by the campaign's crowd platform, and by nobody else."""

    def framed(request, response):
        campaign = getattr(request, "annotation_campaign", None)
        provider = get_provider(campaign.provider if campaign else "local")
        # Replace only frame-ancestors: the site's whole policy (django-csp's middleware)
        # still applies to the task page.
        response._csp_replace = {"frame-ancestors": list(provider.frame_ancestors)}
        return response

    if iscoroutinefunction(view):  # the chat's actions, which may wait on a bot

        @wraps(view)
        async def wrapper(request, *args, **kwargs):
            return framed(request, await view(request, *args, **kwargs))

    else:

        @wraps(view)
        def wrapper(request, *args, **kwargs):
            return framed(request, view(request, *args, **kwargs))

    return xframe_options_exempt(wrapper)


def own_assignment(request, public_id) -> Assignment:
    """The assignment, if it belongs to the worker of this browser session; 404 otherwise."""
    assignment = assignment_with_campaign_and_worker(public_id)
    if assignment is None or assignment.worker is None:
        raise Http404("No such assignment.")
    if not is_current_worker(request, assignment.worker):
        raise Http404("No such assignment.")
    request.annotation_campaign = assignment.campaign
    return assignment


def why_unusable(assignment) -> str | None:
    """Why the assignment can take no more answers ("done" when it is submitted), or None
    while its worker may go on."""
    if assignment.status in Assignment.DONE:
        return "done"
    if assignment.status != Assignment.Status.STARTED:
        return (
            "This batch is no longer yours: it expired or was returned. Start again from your link."
        )
    if assignment.expires_at and assignment.expires_at < timezone.now():
        return "The time for this batch ran out. Start again from your link for a new one."
    return None
