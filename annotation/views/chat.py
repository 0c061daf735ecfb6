"""The chat stage of a chat campaign's item: the conversation page, its four actions (send,
retry, end, flag) as plain form posts (`fmt="html"`: the page again, one post per turn)
and as JSON for the page's script (`fmt="json"`), and the stream of the bot's reply. The
actions call one function of annotation/chat.py each; only the answer's shape differs.

No action asks the bot: sending or retrying makes the bot's reply due. With JavaScript
the page then opens `chat_stream` (server-sent events: the reply's pieces as the bot
writes them, then the conversation's state). Without JavaScript the post itself waits
for the whole reply (the same stream, read to its end here) and redirects to the page:
the degraded, non-streaming form, as the arena's. The views that may wait on a bot are
async and, like everything under `.../chat/`, served by the ASGI service in production
(deploy/nginx.conf): they hold no thread while the bot writes. The page itself
(views/worker.py) is a WSGI page that never waits on a bot.

Each action is for the worker holding the assignment (own_assignment: a 404 for anyone
else, the stream too), CSRF-protected like every POST, and sending or retrying is limited
per worker to EVALHUB_CHAT_MESSAGES_PER_MINUTE (every message costs a request to
somebody's bot). The stream needs no limit of its own: it asks the bot only for a reply
a limited post made due, once (annotation/chat.py's claim).
"""

from functools import partial

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_POST

from endpoints.relay import drain, event_stream_response
from evalhub.errors import UserInputError
from evalhub.ratelimit import Outage, allow_key

from .. import chat
from ..chat import ChatRefused, chat_ended, chat_state
from ..chat_replies import reply_events
from ..models import Item
from .access import framed_by_provider, own_assignment, why_unusable

RATE_LIMITED = gettext_lazy("You are sending messages too fast; wait a minute and send again.")


def chat_page(request, assignment, item, position, total, *, error="", text="", status=200):
    state = chat_state(assignment, item)
    context = {
        "campaign": assignment.campaign,
        "assignment": assignment,
        "item": item,
        "position": position,
        "total": total,
        "state": state,
        "turns": state.shown_turns(),
        "refusal": error,
        "text": text,
        "max_chars": state.config["max_message_chars"],
    }
    return render(request, "annotation/chat.html", context, status=status)


def _send(assignment, item, data):
    return chat.send(assignment, item, data.get("text", ""), data.get("position"))


def _retry(assignment, item, data):
    return chat.retry(assignment, item)


def _end(assignment, item, data):
    return chat.end(assignment, item)


def _flag(assignment, item, data):
    return chat.flag(assignment, item, data.get("position"), data.get("offensive") != "0")


ACTIONS = {"send": _send, "retry": _retry, "end": _end, "flag": _flag}
LIMITED = {"send", "retry"}


def _chat_item(assignment, item_id):
    """(position, item) of the batch's item being chatted about; None if it is not one."""
    if not assignment.campaign.kind.live:
        return None
    items = list(Item.objects.filter(batch_id=assignment.batch_id).order_by("order_in_batch"))
    judged = set(assignment.judgments.values_list("item_id", flat=True))
    for n, item in enumerate(items, 1):
        if item.pk == item_id and item.pk not in judged:
            return n, item, len(items)
    return None


def _act(request, public_id, item_id, action, fmt):
    """(the response, the (assignment, item) whose due reply a form post waits for)."""
    assignment = own_assignment(request, public_id)
    as_json = fmt == "json"

    def refuse(message, status, position=None, item=None, total=None):
        if as_json:
            # The API's one error shape, so that every script reads refusals one way.
            body = UserInputError(message).as_dict()
            if item is not None:
                body["state"] = chat_state(assignment, item).as_json()
            return JsonResponse(body, status=status), None
        if item is None:
            context = {"campaign": assignment.campaign, "reason": message}
            return render(request, "annotation/no_work.html", context, status=status), None
        if chat_ended(assignment, item):  # a late post from the chat page: the rating is next
            return redirect(assignment), None
        text = request.POST.get("text", "") if action == "send" else ""
        page = chat_page(
            request, assignment, item, position, total, error=message, text=text, status=status
        )
        return page, None

    problem = why_unusable(assignment)
    if problem:
        return refuse(_("This batch is finished.") if problem == "done" else problem, 409)
    found = _chat_item(assignment, item_id)
    if found is None:
        return refuse(_("That conversation is not open in your batch."), 400)
    position, item, total = found
    limit = settings.EVALHUB_CHAT_MESSAGES_PER_MINUTE
    # A worker holding an assignment goes on while Redis is down: the endpoint's daily
    # budget, in the database, still bounds what their messages cost.
    allowed = action not in LIMITED or allow_key(
        f"chat:{assignment.worker_id}", limit, 60, on_outage=Outage.FAIL_OPEN
    )
    if not allowed:
        return refuse(str(RATE_LIMITED), 429, position, item, total)
    try:
        state = ACTIONS[action](assignment, item, request.POST)
    except ChatRefused as refused:
        return refuse(refused.problems[0].message, 409, position, item, total)
    if as_json:
        return JsonResponse(state.as_json()), None
    return redirect(assignment), ((assignment, item) if state.due else None)


@framed_by_provider
@require_POST
async def chat_action(request, public_id, item_id, action, fmt):
    response, due = await sync_to_async(_act)(request, public_id, item_id, action, fmt)
    if due is not None:
        await drain(partial(reply_events, *due))
    return response


def _streamed(request, public_id, item_id):
    assignment = own_assignment(request, public_id)
    found = _chat_item(assignment, item_id) if not why_unusable(assignment) else None
    if found is None:
        raise Http404("That conversation is not open in your batch.")
    return assignment, found[1]


@require_GET
async def chat_stream(request, public_id, item_id):
    """The bot's reply due in the worker's conversation, as server-sent events
    (endpoints/relay.py): `piece`s, then `end` with the conversation's state."""
    assignment, item = await sync_to_async(_streamed)(request, public_id, item_id)
    language = getattr(request, "LANGUAGE_CODE", None)  # the campaign's: own_assignment
    return event_stream_response(request, partial(reply_events, assignment, item, language))
