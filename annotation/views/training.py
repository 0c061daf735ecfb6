"""Training pages: the intro and result page, one training item at a time, its feedback.

The worker is the one the start link remembered in this browser session. Everything about
where they stand is in `annotation.training`; these views only route and render.
"""

from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from ..allocation import blocked_message
from ..entry import current_worker
from ..kinds.base import PayloadInvalid
from ..language import serve_campaign
from ..models import Campaign
from ..training import (
    TrainingStatus,
    begin_attempt,
    record_training_answer,
    screening_problems,
    shown_feedback,
    training_state,
)
from .access import framed_by_provider


def _state_or_response(request, slug):
    """(state, None), or (None, the response to send instead) when training cannot go on."""
    campaign = get_object_or_404(Campaign, slug=slug)
    serve_campaign(request, campaign)
    worker = current_worker(request)
    if worker is None:
        return None, redirect("annotation:start", slug=campaign.slug)
    if worker.blocked or not campaign.is_live:
        reason = (
            blocked_message(worker)
            if worker.blocked
            else _("This campaign is not accepting work right now.")
        )
        return None, render(
            request, "annotation/no_work.html", {"campaign": campaign, "reason": reason}
        )
    state = training_state(campaign, worker)
    if state.status == TrainingStatus.NOT_REQUIRED:
        return None, redirect("annotation:start", slug=campaign.slug)
    return state, None


def _item_of(state, item_id):
    item = next((i for i in state.items if i.pk == item_id), None)
    if item is None:
        raise Http404("No such training conversation.")
    return item


@framed_by_provider
@require_GET
def home(request, slug):
    state, response = _state_or_response(request, slug)
    if response:
        return response
    if state.status == TrainingStatus.IN_PROGRESS:
        return redirect("annotation:training-item", slug=slug, item_id=state.next_item.pk)
    graded = state.graded_answer
    return render(
        request,
        "annotation/training_result.html",
        {
            "campaign": state.campaign,
            "state": state,
            "status": state.status,
            "feedback": shown_feedback(graded.feedback, state.campaign.kind) if graded else [],
            "screening": (
                screening_problems(state.campaign, graded)
                if graded and state.status == TrainingStatus.FAILED
                else []
            ),
        },
    )


@framed_by_provider
@require_POST
def begin(request, slug):
    state, response = _state_or_response(request, slug)
    if response:
        return response
    begin_attempt(state.campaign, state.worker)
    return redirect("annotation:training", slug=slug)


def _item_page(request, state, item, *, values=None, errors=None, status=200):
    kind = state.campaign.kind
    config = kind.clean_config(state.campaign.task_config)
    return render(
        request,
        "annotation/training_item.html",
        {
            "campaign": state.campaign,
            "state": state,
            "item": item,
            "kind": kind,
            "config": config,
            "task": kind.item_context(item, config),
            "position": state.position_of(item),
            "total": len(state.items),
            "values": values or {},
            "errors": errors or {},
        },
        status=status,
    )


@framed_by_provider
@require_http_methods(["GET", "POST"])
def item(request, slug, item_id):
    state, response = _state_or_response(request, slug)
    if response:
        return response
    shown = _item_of(state, item_id)
    if shown.pk in state.answers:
        return redirect("annotation:training-feedback", slug=slug, item_id=shown.pk)
    if state.status != TrainingStatus.IN_PROGRESS or state.next_item != shown:
        return redirect("annotation:training", slug=slug)
    if request.method == "GET":
        return _item_page(request, state, shown)
    kind = state.campaign.kind
    try:
        payload = kind.parse_payload(
            shown, kind.clean_config(state.campaign.task_config), request.POST
        )
    except PayloadInvalid as invalid:
        return _item_page(
            request, state, shown, values=request.POST, errors=invalid.errors, status=400
        )
    record_training_answer(state.campaign, state.worker, shown, payload)
    return redirect("annotation:training-feedback", slug=slug, item_id=shown.pk)


@framed_by_provider
@require_GET
def feedback(request, slug, item_id):
    state, response = _state_or_response(request, slug)
    if response:
        return response
    shown = _item_of(state, item_id)
    answer = state.answers.get(shown.pk)
    if answer is None:
        # Nothing submitted on it in this attempt: its gold stays on the server.
        return redirect("annotation:training", slug=slug)
    position = state.position_of(shown)
    return render(
        request,
        "annotation/training_feedback.html",
        {
            "campaign": state.campaign,
            "state": state,
            "answer": answer,
            "feedback": shown_feedback(answer.feedback, state.campaign.kind),
            "position": position,
            "total": len(state.items),
            "last": position == len(state.items),
        },
    )
