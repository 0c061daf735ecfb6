"""A crowdworker's hold on a task page: who may frame it, whose assignment it is, and
whether the assignment still takes answers. The item pages (worker.py), the chat stage
(chat.py) and training share these."""

from functools import wraps
from inspect import iscoroutinefunction

from django.conf import settings
from django.http import Http404
from django.shortcuts import render
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.views.decorators.clickjacking import xframe_options_exempt

from ..crowd import get_provider
from ..entry import is_current_worker
from ..hot_queries import assignment_with_campaign_and_worker
from ..language import browser_language, serve_campaign, speak, spoken_response
from ..models import Assignment


def framed_by_provider(view):
    """Task pages may be framed by the campaign's crowd platform, and by nobody else. They
    speak the worker's language (annotation/language.py), a 404 included."""

    def framed(request, response):
        response = spoken_response(request, response)
        campaign = getattr(request, "annotation_campaign", None)
        provider = get_provider(campaign.provider if campaign else "local")
        # Replace only frame-ancestors: the site's whole policy (django-csp's middleware)
        # still applies to the task page.
        response._csp_replace = {"frame-ancestors": list(provider.frame_ancestors)}
        return response

    if iscoroutinefunction(view):  # the chat's actions, which may wait on a bot

        @wraps(view)
        async def wrapper(request, *args, **kwargs):
            with translation.override(translation.get_language(), deactivate=True):
                speak(request, browser_language(request) or settings.LANGUAGE_CODE)
                try:
                    response = await view(request, *args, **kwargs)
                except Http404:
                    response = not_found(request)
                return framed(request, response)

    else:

        @wraps(view)
        def wrapper(request, *args, **kwargs):
            with translation.override(translation.get_language(), deactivate=True):
                speak(request, browser_language(request) or settings.LANGUAGE_CODE)
                try:
                    response = view(request, *args, **kwargs)
                except Http404:
                    response = not_found(request)
                return framed(request, response)

    return xframe_options_exempt(wrapper)


def not_found(request):
    """The worker's 404, in the language the page speaks by now (the campaign's when the
    view knew it): a worker who mistyped a link learns what to do in words they read."""
    context = {"campaign": None, "reason": _("Open the task again from the link you were given.")}
    return render(request, "annotation/not_found.html", context, status=404)


def own_assignment(request, public_id) -> Assignment:
    """The assignment, if it belongs to the worker of this browser session; 404 otherwise."""
    assignment = assignment_with_campaign_and_worker(public_id)
    if assignment is None or assignment.worker is None:
        raise Http404("No such assignment.")
    serve_campaign(request, assignment.campaign)
    if not is_current_worker(request, assignment.worker):
        raise Http404("No such assignment.")
    return assignment


def why_unusable(assignment) -> str | None:
    """Why the assignment can take no more answers ("done" when it is submitted), or None
    while its worker may go on."""
    if assignment.status in Assignment.DONE:
        return "done"
    if assignment.status != Assignment.Status.STARTED:
        return _(
            "This batch is no longer yours: it expired or was returned. Start again from your link."
        )
    if assignment.expires_at and assignment.expires_at < timezone.now():
        return _("The time for this batch ran out. Start again from your link for a new one.")
    return None
