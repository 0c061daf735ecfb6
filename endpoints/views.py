"""Pages of an endpoint: register or edit it (with its latest calls' outcomes), test its
connection, and remove it. A system's bot endpoint lives under /systems/<slug>/endpoint/; a
model endpoint of no system (a judge's, registered with the judge) under /endpoints/<id>/.

Only the system's owner and staff (`BotEndpoint.is_managed_by`, i.e. System.is_managed_by)
see and change a system's endpoint; others who can see the system get 403, those who cannot
see it 404, and anonymous visitors the login page. A model endpoint is private: anyone but
its owner and staff get 404, as if it did not exist."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from evalhub.errors import UserInputError, show_on_page
from evalhub.quotas import QuotaExceeded, check_quota
from evalhub.ratelimit import Outage, allow_key
from evalhub.views.systems import visible_system_or_404

from . import calls
from .budget import chat_limit, chat_used_today, used_today
from .forms import BotEndpointForm, ModelEndpointForm
from .models import BotEndpoint
from .probe import probe, url_warning


def managed_system(request, slug):
    system = visible_system_or_404(request, slug)
    if not system.is_managed_by(request.user):
        raise PermissionDenied("Only the owner of a system and staff manage its bot endpoint.")
    return system


def managed_model_endpoint(request, pk) -> BotEndpoint:
    endpoint = get_object_or_404(
        BotEndpoint.objects.select_related("owner"), pk=pk, system__isnull=True
    )
    if not endpoint.is_managed_by(request.user):
        raise Http404("No such endpoint.")
    return endpoint


def _page(request, endpoint, form, **context):
    """The endpoint's page: its form, today's usage, its URL's warning and latest calls."""
    context.update(
        {
            "endpoint": endpoint,
            "form": form,
            "used_today": used_today(endpoint.pk) if endpoint else 0,
            "chat_used_today": chat_used_today(endpoint.pk) if endpoint else 0,
            "chat_limit": chat_limit(endpoint.daily_budget, endpoint.chat_share) if endpoint else 0,
            "calls": list(calls.recent(endpoint)) if endpoint else [],
            "url_warning": url_warning(endpoint.url) if endpoint else "",
        }
    )
    status = 400 if request.method == "POST" else 200
    return render(request, "endpoints/endpoint_form.html", context, status=status)


def _saved(request, saved: BotEndpoint):
    messages.success(request, f"Saved the endpoint of {saved.label}.")
    if warning := url_warning(saved.url):
        messages.warning(request, warning)
    return redirect(saved.get_absolute_url())


@login_required
@require_http_methods(["GET", "POST"])
def endpoint_edit(request, slug):
    system = managed_system(request, slug)
    endpoint = BotEndpoint.objects.filter(system=system).first()
    form = BotEndpointForm(request.POST or None, instance=endpoint, system=system)
    if request.method == "POST" and form.is_valid():
        try:
            if endpoint is None:
                check_quota(request.user, BotEndpoint)
        except QuotaExceeded as refused:
            show_on_page(request, refused, form)
        else:
            with transaction.atomic():
                saved = form.save()
            return _saved(request, saved)
    return _page(
        request,
        endpoint,
        form,
        heading=f"Bot endpoint of {system.name}",
        back_url=system.get_absolute_url(),
        back_label=system.name,
        intro="Tournaments talk to the system here, in EvalHub's bot protocol or the "
        "OpenAI-compatible chat completions protocol (vLLM, Ollama, llama.cpp's server, "
        "TGI, hosted APIs).",
        test_url=reverse("system-endpoint-test", args=[system.slug]),
        delete_url=reverse("system-endpoint-delete", args=[system.slug]),
    )


@login_required
@require_http_methods(["GET", "POST"])
def model_endpoint_edit(request, pk):
    """A model endpoint of no system is registered with what uses it (a judge, on its
    registration page); here its owner edits and tests it."""
    endpoint = managed_model_endpoint(request, pk)
    form = ModelEndpointForm(request.POST or None, instance=endpoint)
    if request.method == "POST" and form.is_valid():
        with transaction.atomic():
            saved = form.save()
        return _saved(request, saved)
    return _page(
        request,
        endpoint,
        form,
        heading=f"Model endpoint of {endpoint.label}",
        intro="The model is reached here, in the OpenAI-compatible chat completions "
        "protocol (vLLM, Ollama, llama.cpp's server, TGI, hosted APIs).",
        test_url=reverse("model-endpoint-test", args=[endpoint.pk]),
        delete_url="",
    )


@login_required
@require_POST
def endpoint_delete(request, slug):
    system = managed_system(request, slug)
    endpoint = BotEndpoint.objects.filter(system=system).first()
    if endpoint is not None:
        try:
            endpoint.remove()
        except UserInputError as refused:
            show_on_page(request, refused)
            return redirect(system)
        messages.success(request, f"Removed the bot endpoint of {system.name}.")
    return redirect(system)


def allow_probe(user, endpoint: BotEndpoint) -> bool:
    # A connection test is a real request on the owner's budget and the bot's time.
    limit = settings.EVALHUB_ENDPOINT_PROBES_PER_MINUTE
    key = f"endpoint-probe:{user.pk}:{endpoint.pk}"
    return allow_key(key, limit, 60, on_outage=Outage.FAIL_OPEN)


def _probe(request, endpoint: BotEndpoint | None) -> None:
    if endpoint is None:
        show_on_page(request, "Register the bot endpoint first, then test it.")
    elif not allow_probe(request.user, endpoint):
        show_on_page(
            request,
            f"At most {settings.EVALHUB_ENDPOINT_PROBES_PER_MINUTE} connection tests a minute: "
            "try again shortly.",
        )
    else:
        result = probe(endpoint)
        if result.ok:
            messages.success(
                request, f"Connected in {result.latency_ms} ms. The bot answered: {result.reply}"
            )
        else:
            show_on_page(
                request,
                f"The connection test failed after {result.latency_ms} ms: {result.message}",
            )


@login_required
@require_POST
def endpoint_probe(request, slug):
    system = managed_system(request, slug)
    _probe(request, BotEndpoint.objects.filter(system=system).first())
    return redirect("system-endpoint", slug=system.slug)


@login_required
@require_POST
def model_endpoint_probe(request, pk):
    endpoint = managed_model_endpoint(request, pk)
    _probe(request, endpoint)
    return redirect(endpoint.get_absolute_url())
