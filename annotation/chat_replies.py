"""Who answers a worker in a chat campaign: a registry filled by a higher layer.

annotation never imports tournaments, where the bot endpoints and their client live; the
tournaments app registers, in its AppConfig.ready, the function that asks a system's
endpoint for a reply and the one that lists the systems a user may chat with (the same
pattern as annotation.models.register_private_rule).

`reply(campaign, system, conversation_id, turns) -> str` returns the bot's next turn
after `turns` ([{"speaker": 0 | 1, "text"}], the worker is speaker 0, the bot 1) or raises
ReplyFailed with a message a worker can read. `chat_systems(user)` is a queryset of the
systems that have an endpoint `user` may use in a campaign.
"""

from collections.abc import Callable
from dataclasses import dataclass

from evalhub.models import System


class ReplyFailed(Exception):
    """The bot gave no usable reply. `message` is for the worker; `detail` for the log."""

    def __init__(self, message: str, *, detail: str = "", transient: bool = True):
        super().__init__(message)
        self.message = message
        self.detail = detail or message
        self.transient = transient


@dataclass
class _Registry:
    reply: Callable | None = None
    systems: Callable | None = None


_REGISTRY = _Registry()


def register(*, reply: Callable, systems: Callable) -> None:
    _REGISTRY.reply = reply
    _REGISTRY.systems = systems


def reply(campaign, system: System, conversation_id: str, turns: list[dict]) -> str:
    if _REGISTRY.reply is None:
        raise ReplyFailed("No chatbot can be reached on this site.", transient=False)
    return _REGISTRY.reply(campaign, system, conversation_id, turns)


def chat_systems(user):
    """The systems `user` may put in a chat campaign (none when nothing is registered)."""
    if _REGISTRY.systems is None:
        return System.objects.none()
    return _REGISTRY.systems(user)


def replier():
    """The registered reply function (tests swap it and put it back)."""
    return _REGISTRY.reply
