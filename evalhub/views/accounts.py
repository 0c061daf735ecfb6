from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST
from rest_framework.authtoken.models import Token

from ..errors import show_on_page
from ..forms import SignupForm
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
def account(request):
    token = Token.objects.filter(user=request.user).first()
    systems = System.objects.filter(owner=request.user)
    notice_form = PreferencesForm(user=request.user)
    return render(
        request,
        "registration/account.html",
        {"token": token, "systems": systems, "notice_form": notice_form},
    )


@login_required
@require_POST
def regenerate_token(request):
    Token.objects.filter(user=request.user).delete()
    Token.objects.create(user=request.user)
    messages.success(request, "A new API token was created; the old one no longer works.")
    return redirect("account")
