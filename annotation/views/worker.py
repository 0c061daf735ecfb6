"""The pages a crowdworker sees: start link, one item at a time, completion code."""

from datetime import UTC, datetime

from django.core import signing
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from evalhub.permissions import is_managed_by

from ..allocation import NoWork, next_assignment
from ..chat import chat_ended
from ..conflicts import owners_behind
from ..crowd import get_provider
from ..crowd.base import BadArrival
from ..crowd.mturk import PREVIEW as MTURK_PREVIEW
from ..crowd.mturk import external_submit_url
from ..entry import (
    arriving_worker,
    bind_platform_session,
    current_worker,
    is_current_worker,
    platform_conflict,
    platform_submit_to,
    remember,
)
from ..invitations import redeem
from ..kinds.base import PayloadInvalid
from ..language import serve_campaign
from ..models import Assignment, Campaign
from ..services import batch_items, record_judgment, submit_if_complete
from ..training import needs_training
from ..visibility import PRIVATE_REFUSAL, is_public, may_serve
from .access import framed_by_provider, own_assignment, why_unusable
from .chat import chat_page
from .in_place import answers_in_place, shown_in_place, wants_in_place

STARTED_SALT = "annotation.item-started"


@framed_by_provider
@require_http_methods(["GET"])
def start(request, slug):
    campaign = get_object_or_404(Campaign, slug=slug)
    serve_campaign(request, campaign)
    provider = get_provider(campaign.provider)
    if request.GET.get("assignmentId") == MTURK_PREVIEW:
        return _mturk_preview(request, campaign)
    # The browser's remembered worker is read only where it is needed: a visit that names
    # an identity is compared with the session by public id (is_current_worker), without
    # reading the worker twice.
    if "invite" in request.GET:
        arrival = None
        worker, refusal = redeem(campaign, request.GET["invite"], current_worker(request))
    else:
        try:
            arrival = provider.identify(request)
        except BadArrival as bad:
            return _before_serving(request, campaign, "annotation/no_work.html", str(bad), 400)
        worker, refusal = arriving_worker(request, campaign, arrival)
    if refusal:
        return _before_serving(
            request, campaign, "annotation/no_work.html", refusal.reason, refusal.status
        )
    if worker is None:
        return _before_serving(request, campaign, "annotation/identify.html", "", 200)
    one_batch = not provider.allows_more_batches and arrival is not None
    refusal = platform_conflict(
        campaign,
        worker,
        arrival,
        same_browser=is_current_worker(request, worker),
        one_batch=one_batch,
    )
    if refusal:
        return _before_serving(request, campaign, "annotation/no_work.html", refusal, 403)
    if not may_serve(campaign, arrival, worker):
        return _before_serving(
            request, campaign, "annotation/no_work.html", str(PRIVATE_REFUSAL), 403
        )
    remember(request, worker)
    if needs_training(campaign, worker):
        return redirect("annotation:training", slug=campaign.slug)
    if one_batch and arrival.provider == provider.key:
        # One submission per participant: a returning participant sees their code again.
        finished = Assignment.objects.filter(
            campaign=campaign, worker=worker, status__in=Assignment.DONE
        ).first()
        if finished:
            return redirect("annotation:done", public_id=finished.public_id)
    try:
        assignment = next_assignment(
            campaign,
            worker,
            batch=_platform_batch(campaign, request),
            owners=owners_behind(worker, request.user),
        )
    except NoWork as no_work:
        done = (
            Assignment.objects.filter(campaign=campaign, worker=worker, status__in=Assignment.DONE)
            .order_by("-submitted_at")
            .first()
        )
        return render(
            request,
            "annotation/no_work.html",
            {"campaign": campaign, "reason": str(no_work), "last_done": done},
        )
    if arrival is not None:
        bind_platform_session(request, assignment, arrival)
    return redirect(assignment)


def _platform_batch(campaign, request):
    """The batch an MTurk HIT sells (its task URL names it); None elsewhere."""
    if campaign.provider != "mturk" or not request.GET.get("assignmentId"):
        return None
    try:
        return campaign.batches.filter(pk=int(request.GET.get("batch", ""))).first()
    except ValueError:
        return None


def _before_serving(request, campaign, template: str, reason: str, status: int):
    """A start page shown to a visitor who is not (yet) served. A private campaign's
    title is for the people it serves and its managers: a stranger's page names no
    campaign (the title could say which unreleased system is being evaluated)."""
    shown = campaign if is_managed_by(request.user, campaign) or is_public(campaign) else None
    context = {"campaign": shown, "reason": reason}
    return render(request, template, context, status=status)


def _mturk_preview(request, campaign):
    """What a worker sees before accepting a HIT: the first item, read-only; nothing is
    stored and nobody is identified."""
    batch = _platform_batch(campaign, request) or campaign.batches.first()
    item = batch.items.order_by("order_in_batch").first() if batch else None
    if item is None:
        raise Http404("No such task.")
    context = task_page_context(campaign, item, 1, batch.items.count())
    # A preview is open to anyone who crafts its URL: a private campaign's shows the
    # instructions only, never an item.
    context["private"] = not is_public(campaign)
    return render(request, "annotation/mturk_preview.html", context)


def task_page_context(
    campaign, item, position, total, *, values=None, errors=None, assignment=None
) -> dict:
    """What `annotation/assignment.html` needs to show one item (the staff preview uses it
    too, with its own `form_action`, and no assignment)."""
    kind = campaign.kind
    config = kind.clean_config(campaign.task_config)
    if assignment is None:
        task = kind.item_context(item, config)
    else:
        task = kind.assignment_context(assignment, item, config)
    return {
        "campaign": campaign,
        "item": item,
        "kind": kind,
        "config": config,
        "task": task,
        "position": position,
        "total": total,
        "values": values or {},
        "errors": errors or {},
    }


def _item_page(request, assignment, item, position, total, *, values=None, errors=None, status=200):
    started = signing.dumps(
        {"a": str(assignment.public_id), "i": item.pk, "t": timezone.now().timestamp()},
        salt=STARTED_SALT,
    )
    context = task_page_context(
        assignment.campaign,
        item,
        position,
        total,
        values=values,
        errors=errors,
        assignment=assignment,
    )
    context.update(assignment=assignment, started_token=started)
    return render(request, "annotation/assignment.html", context, status=status)


def _unusable_response(request, assignment, status=200):
    """A redirect or a message when the assignment can no longer take answers, else None."""
    problem = why_unusable(assignment)
    if problem == "done":
        return redirect("annotation:done", public_id=assignment.public_id)
    if problem:
        context = {"campaign": assignment.campaign, "reason": problem}
        return render(request, "annotation/no_work.html", context, status=status)
    return None


@framed_by_provider
@require_http_methods(["GET"])
def assignment_page(request, public_id):
    assignment = own_assignment(request, public_id)
    if (unusable := _unusable_response(request, assignment)) is not None:
        return unusable
    items = batch_items(assignment)
    pending = [(n, entry) for n, entry in enumerate(items, 1) if not entry.judged]
    if not pending:
        submit_if_complete(assignment, len(items))
        return redirect("annotation:done", public_id=assignment.public_id)
    position, entry = pending[0]
    item = entry.item
    if (elsewhere := assignment.campaign.kind.page_elsewhere(assignment, item)) is not None:
        return redirect(elsewhere)  # e.g. an arena's battle pages
    if assignment.campaign.kind.live and not chat_ended(assignment, item):
        # A live item starts with its conversation.
        return chat_page(request, assignment, item, position, len(items))
    return _item_page(request, assignment, item, position, len(items))


def _started_at(request, assignment, item):
    """When the item was shown, from the token the page carried (signed: not forgeable)."""
    try:
        data = signing.loads(request.POST.get("started", ""), salt=STARTED_SALT, max_age=24 * 3600)
    except signing.BadSignature:
        return timezone.now()
    if data.get("a") != str(assignment.public_id) or data.get("i") != item.pk:
        return timezone.now()
    return datetime.fromtimestamp(data["t"], tz=UTC)


def _client_ms(request) -> int | None:
    try:
        value = int(request.POST.get("client_ms", ""))
    except ValueError:
        return None
    return value if 0 <= value < 24 * 3600 * 1000 else None


@framed_by_provider
@require_POST
@answers_in_place
def submit_item(request, public_id, item_id):
    assignment = own_assignment(request, public_id)
    if (unusable := _unusable_response(request, assignment, status=409)) is not None:
        return unusable
    items = batch_items(assignment)
    try:
        position, entry = next((n, e) for n, e in enumerate(items, 1) if e.pk == item_id)
    except StopIteration:
        return render(
            request,
            "annotation/no_work.html",
            {"campaign": assignment.campaign, "reason": _("That item is not part of your batch.")},
            status=400,
        )
    item = entry.item
    kind = assignment.campaign.kind
    config = kind.clean_config(assignment.campaign.task_config)
    try:
        payload = kind.parse_assignment_payload(assignment, item, config, request.POST)
    except PayloadInvalid as invalid:
        page = _item_page(
            request,
            assignment,
            item,
            position,
            len(items),
            values=request.POST,
            errors=invalid.errors,
            status=400,
        )
        return shown_in_place(page, assignment.get_absolute_url(), request)
    record_judgment(
        assignment,
        item,
        payload,
        started_at=_started_at(request, assignment, item),
        client_duration_ms=_client_ms(request),
    )
    pending = [(n, e) for n, e in enumerate(items, 1) if not e.judged and e.pk != item.pk]
    # Counted again only when this submit looks like the batch's last: a submit racing
    # this one in another tab is caught by the next page, which closes a complete batch.
    if not pending and submit_if_complete(assignment, len(items)):
        done_url = reverse("annotation:done", args=[public_id])
        if wants_in_place(request):
            # The completion page without the second request, where it can be swapped in.
            page, in_place = _done_page(request, assignment)
            if in_place:
                return shown_in_place(page, done_url, request)
        return redirect(done_url)
    if pending and wants_in_place(request) and not kind.live:
        # The page the redirect would show, without the second request (views/in_place.py).
        position, entry = pending[0]
        page = _item_page(request, assignment, entry.item, position, len(items))
        return shown_in_place(page, assignment.get_absolute_url(), request)
    return redirect(assignment)


@framed_by_provider
@require_http_methods(["GET"])
def done(request, public_id):
    assignment = own_assignment(request, public_id)
    if assignment.status not in Assignment.DONE:
        return redirect(assignment)
    response, _ = _done_page(request, assignment)
    return response


def _done_page(request, assignment) -> tuple:
    """The completion page, and whether it can be shown in place of the task page: not
    when it sends the worker back to their platform, by the redirect in its head (which
    the task page's script does not carry over) or by a form posting to MTurk (which
    needs its own form-action in the document's policy)."""
    provider = get_provider(assignment.campaign.provider)
    mturk_submit = None
    if assignment.worker.provider == "mturk" and assignment.provider_ref:
        mturk_submit = external_submit_url(platform_submit_to(request, assignment))
    redirect_url = (
        None if mturk_submit else provider.completion_url(assignment.campaign, assignment)
    )
    response = render(
        request,
        "annotation/done.html",
        {
            "campaign": assignment.campaign,
            "assignment": assignment,
            "redirect_url": redirect_url,
            "mturk_submit": mturk_submit,
            "more": assignment.campaign.is_live and provider.allows_more_batches,
        },
    )
    if mturk_submit:
        # This page posts the finished HIT back to MTurk: the one form sent off the site.
        response._csp_update = {"form-action": [mturk_submit]}
    return response, not (mturk_submit or redirect_url)
