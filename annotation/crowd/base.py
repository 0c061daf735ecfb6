"""The crowd provider interface (after Mephisto's): a plug-in per platform.

A provider says who a participant arriving on a start link is, which sites may frame the
task pages, where to send a participant who finished, and carries out the platform side
of launching, pausing, finishing and paying. The local provider does the platform side
as no-ops, which makes the whole loop testable offline.
"""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Arrival:
    """A participant as the start link's query string names them."""

    provider: str
    external_id: str
    extra: dict = field(default_factory=dict)


class CrowdProvider:
    key = ""
    # Sources allowed in `Content-Security-Policy: frame-ancestors` for task pages.
    frame_ancestors: tuple[str, ...] = ("'self'",)

    def identify(self, request) -> Arrival | None:
        raise NotImplementedError

    def completion_url(self, campaign, assignment) -> str | None:
        template = campaign.completion_redirect_url
        return template.replace("{code}", assignment.completion_code) if template else None

    def launch(self, campaign) -> None:
        """Publish the campaign on the platform (nothing to do for a shared link)."""

    def pause(self, campaign) -> None:
        """Stop the platform from sending new participants."""

    def finish(self, campaign) -> None:
        """Close the campaign on the platform."""

    def approve(self, assignment) -> None:
        """Pay for an assignment."""

    def reject(self, assignment, reason: str) -> None:
        """Refuse payment for an assignment, with the reason the worker will read."""
