"""The notices page (what a user was told) and the account page's notice choices."""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from ..models import Notice, NoticeKind
from ..notifications import preferences, set_preferences
from ..nul_refusal import RefusesNul


class PreferencesForm(RefusesNul, forms.Form):
    """Two checkboxes per kind: `<kind>_site` and `<kind>_email`."""

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        for kind, (on_site, by_email) in preferences(user).items():
            label = NoticeKind(kind).label
            self.fields[f"{kind}_site"] = forms.BooleanField(
                required=False, initial=on_site, label=f"{label}: on this site"
            )
            self.fields[f"{kind}_email"] = forms.BooleanField(
                required=False, initial=by_email, label=f"{label}: by email"
            )

    def rows(self):
        return [
            (NoticeKind(kind).label, self[f"{kind}_site"], self[f"{kind}_email"])
            for kind in NoticeKind.values
        ]

    def choices(self) -> dict[str, tuple[bool, bool]]:
        data = self.cleaned_data
        return {k: (data[f"{k}_site"], data[f"{k}_email"]) for k in NoticeKind.values}


@login_required
@require_GET
def notice_list(request):
    notices = Notice.objects.filter(user=request.user, kind__in=NoticeKind.values)
    page = Paginator(notices, 50).get_page(request.GET.get("page"))
    return render(request, "evalhub/notices.html", {"page": page})


@login_required
@require_POST
def notices_read(request):
    n = Notice.objects.filter(user=request.user, read_at__isnull=True).update(
        read_at=timezone.now()
    )
    messages.success(request, f"{n} notice{'s' if n != 1 else ''} marked as read.")
    return redirect("notices")


@login_required
@require_POST
def notice_preferences(request):
    form = PreferencesForm(request.POST, user=request.user)
    if form.is_valid():  # checkboxes: always valid
        set_preferences(request.user, form.choices())
        messages.success(request, "Your notice choices are saved.")
    return redirect("account")
