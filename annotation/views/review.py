"""The staff review page of a campaign: submitted work with each worker's quality figures,
and bulk approve, reject (with a reason), bonus and block."""

import secrets

from django import forms
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from evalhub import limits
from evalhub.errors import show_on_page
from evalhub.nul_refusal import RefusesNul
from evalhub.permissions import staff_required

from ..models import Campaign
from ..review_queue import (
    ACTIONS,
    ReviewInvalid,
    decide,
    review_log,
    review_rows,
    unmatched_submissions,
)


class ReviewForm(RefusesNul, forms.Form):
    action = forms.ChoiceField(choices=[(a, a.capitalize()) for a in ACTIONS])
    assignments = forms.MultipleChoiceField(required=False)
    reason = forms.CharField(required=False, max_length=limits.REASON_CHARS, widget=forms.Textarea)
    amount = forms.DecimalField(required=False, min_value=0, max_digits=6, decimal_places=2)
    # One per rendering of the page: a form sent twice never pays a bonus twice.
    key = forms.CharField(max_length=64, widget=forms.HiddenInput)

    def __init__(self, *args, rows=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["assignments"].choices = [
            (str(r.assignment.public_id), str(r.assignment.public_id)) for r in rows
        ]


@staff_required
@require_http_methods(["GET", "POST"])
def campaign_review(request, slug):
    campaign = get_object_or_404(Campaign, slug=slug)
    rows = review_rows(campaign)
    form = ReviewForm(request.POST or None, rows=rows, initial={"key": secrets.token_hex(16)})
    status = 200
    if request.method == "POST":
        if form.is_valid():
            data = form.cleaned_data
            try:
                outcome = decide(
                    campaign,
                    data["assignments"],
                    data["action"],
                    actor=request.user,
                    reason=data["reason"],
                    amount=data["amount"],
                    key=f"review:{data['key']}",
                )
            except ReviewInvalid as invalid:
                show_on_page(request, invalid, form)
            else:
                if outcome.done:
                    messages.success(
                        request, f"{data['action'].capitalize()}: {len(outcome.done)} done."
                    )
                for assignment, problem in outcome.failed:
                    show_on_page(request, str(problem), about=assignment.worker.external_id)
                return redirect("annotation:manage-campaign-review", slug=campaign.slug)
        status = 400
    return render(
        request,
        "annotation/manage/review.html",
        {
            "campaign": campaign,
            "rows": rows,
            "form": form,
            "chosen": set(form.data.getlist("assignments")) if form.is_bound else set(),
            "log": review_log(campaign),
            "unmatched": unmatched_submissions(campaign),
        },
        status=status,
    )
