"""Pages of a system's bot endpoint: register or edit it (with its latest calls' outcomes),
and remove it.

Only the system's owner and staff (`BotEndpoint.is_managed_by`, i.e. System.is_managed_by)
see and change an endpoint; others who can see the system get 403, those who cannot see
it 404, and anonymous visitors the login page."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from evalhub.errors import UserInputError, show_on_page
from evalhub.quotas import QuotaExceeded, check_quota
from evalhub.views.systems import visible_system_or_404

from . import calls
from .budget import chat_limit, chat_used_today, used_today
from .forms import BotEndpointForm
from .models import BotEndpoint


def managed_system(request, slug):
    system = visible_system_or_404(request, slug)
    if not system.is_managed_by(request.user):
        raise PermissionDenied("Only the owner of a system and staff manage its bot endpoint.")
    return system


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
                form.save()
            messages.success(request, f"Saved the bot endpoint of {system.name}.")
            return redirect("system-endpoint", slug=system.slug)
    context = {
        "system": system,
        "endpoint": endpoint,
        "form": form,
        "used_today": used_today(endpoint.pk) if endpoint else 0,
        "chat_used_today": chat_used_today(endpoint.pk) if endpoint else 0,
        "chat_limit": chat_limit(endpoint.daily_budget, endpoint.chat_share) if endpoint else 0,
        "calls": list(calls.recent(endpoint)) if endpoint else [],
    }
    status = 400 if request.method == "POST" else 200
    return render(request, "endpoints/endpoint_form.html", context, status=status)


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
