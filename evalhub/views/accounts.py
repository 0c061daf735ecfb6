from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from ..api_tokens import create_token, live_tokens, revoke_token
from ..errors import UserInputError, show_on_page
from ..forms import ApiTokenForm, SignupForm
from ..models import System
from ..ratelimit import Outage, allow
from .notices import PreferencesForm


@require_http_methods(["GET", "POST"])
def signup(request):
    form = SignupForm(request.POST or None)
    # A new account is a new identity: with the limit uncountable (Redis down), refused.
    if request.method == "POST" and not allow(
        request,
        "signup",
        settings.EVALHUB_SIGNUPS_PER_HOUR,
        window_seconds=3600,
        on_outage=Outage.FAIL_CLOSED,
    ):
        form = SignupForm()
        show_on_page(request, "Too many sign-ups from your address; try again in an hour.")
        return render(request, "registration/signup.html", {"form": form}, status=429)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(request, f"Welcome, {user.username}. Register your first system.")
        return redirect("system-create")
    return render(request, "registration/signup.html", {"form": form})


@login_required
def account(request, *, token_form=None, new_token=None, status=200):
    """The account page: systems, API tokens (a new one shown this once), notices."""
    systems = System.objects.filter(owner=request.user)
    notice_form = PreferencesForm(user=request.user)
    context = {
        "systems": systems,
        "notice_form": notice_form,
        "tokens": live_tokens(request.user),
        "token_form": token_form or ApiTokenForm(),
        "new_token": new_token,
        "token_days": settings.EVALHUB_API_TOKEN_DAYS,
    }
    return render(request, "registration/account.html", context, status=status)


@never_cache  # the page shows the new token: no cache may keep it
@login_required
@require_POST
def create_api_token(request):
    form = ApiTokenForm(request.POST)
    if not form.is_valid():
        return account(request, token_form=form, status=400)
    try:
        made, token = create_token(request.user, form.cleaned_data["name"])
    except UserInputError as refused:
        show_on_page(request, refused, form)
        return account(request, token_form=form, status=400)
    return account(request, new_token={"token": token, "name": made.name, "expiry": made.expiry})


@login_required
@require_POST
def revoke_api_token(request, starts_with):
    if revoke_token(request.user, starts_with):
        messages.success(
            request, f"The token starting {starts_with} was revoked: it no longer works."
        )
    else:
        show_on_page(request, f"You have no API token starting {starts_with}.")
    return redirect("account")
