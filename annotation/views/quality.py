"""Staff pages for quality control: a campaign's workers with their figures, and blocking."""

from django import forms
from django.contrib import messages
from django.http import HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_POST

from evalhub import limits
from evalhub.nul_refusal import RefusesNul
from evalhub.permissions import staff_required

from ..models import Campaign, Worker
from ..quality import set_blocked, sort_figures, worker_figures


class BlockForm(RefusesNul, forms.Form):
    action = forms.ChoiceField(choices=[("block", "Block"), ("unblock", "Unblock")])
    reason = forms.CharField(required=False, max_length=limits.REASON_CHARS)
    # Where the form was sent from: the table to show again, sorted as it was.
    campaign = forms.SlugField(max_length=80)
    sort = forms.CharField(required=False, max_length=20)

    def clean(self):
        data = super().clean()
        if data.get("action") == "block" and not data.get("reason", "").strip():
            self.add_error("reason", "Say why this worker is blocked; they may ask.")
        return data


# (sort key, heading) of the sortable columns, in page order.
COLUMNS = [
    ("worker", "Worker"),
    ("judgments", "Judgments"),
    ("batches", "Batches submitted"),
    ("gold", "Gold correct"),
    ("controls", "Human-human: labelled human"),
    ("agreement", "Agrees with others"),
    ("seconds", "Median s / item"),
    ("blocked", "Status"),
]


def _headings(sort: str) -> list[dict]:
    """Column headings whose link sorts by the column, or reverses it when it is the sort."""
    return [
        {
            "heading": heading,
            "sort": f"-{key}" if sort == key else key,
            "current": "ascending" if sort == key else "descending" if sort == f"-{key}" else "",
        }
        for key, heading in COLUMNS
    ]


def _table(request, campaign, *, sort, errors=None, values=None, status=200):
    figures, sort = sort_figures(worker_figures(campaign), sort)
    errors, values = errors or {}, values or {}
    rows = [
        {
            "f": f,
            "rates": [f.gold, f.controls, f.agreement],
            "error": errors.get(f.worker.public_id, ""),
            "reason": values.get(f.worker.public_id, ""),
        }
        for f in figures
    ]
    return render(
        request,
        "annotation/quality/workers.html",
        {
            "campaign": campaign,
            "rows": rows,
            "sort": sort,
            "headings": _headings(sort),
            "blocked_judgments": sum(f.judgments for f in figures if f.worker.blocked),
        },
        status=status,
    )


@staff_required
@require_GET
def campaign_workers(request, slug):
    campaign = get_object_or_404(Campaign, slug=slug)
    return _table(request, campaign, sort=request.GET.get("sort"))


@staff_required
@require_POST
def block_worker(request, public_id):
    worker = get_object_or_404(Worker, public_id=public_id)
    form = BlockForm(request.POST)
    if not form.is_valid() and "campaign" in form.errors:
        return HttpResponseBadRequest("The form did not say which campaign it came from.")
    campaign = get_object_or_404(Campaign, slug=form.data["campaign"])
    if not form.is_valid():
        # The table again, with the message next to this worker's reason field.
        problems = form.errors.get("reason") or form.errors.get("action") or form.errors["sort"]
        return _table(
            request,
            campaign,
            sort=form.data.get("sort"),
            errors={worker.public_id: " ".join(problems)},
            values={worker.public_id: form.data.get("reason", "")},
            status=400,
        )
    blocked = form.cleaned_data["action"] == "block"
    set_blocked(worker, blocked=blocked, reason=form.cleaned_data["reason"], by=request.user)
    messages.success(
        request, f"{worker.external_id} is {'blocked' if blocked else 'unblocked'} everywhere."
    )
    url = reverse("annotation:quality-workers", args=[campaign.slug])
    sort = form.cleaned_data["sort"]
    return redirect(f"{url}?{urlencode({'sort': sort})}" if sort else url)
