"""The crowd provider interface (after Mephisto's): a plug-in per platform.

A provider says who a participant arriving on a start link is, which sites may frame the
task pages and where to send a participant who finished; and it carries out the platform
side of a campaign: estimate its cost, launch it, sync what the platform knows
(submissions, returns, expiries), approve or reject with feedback, pay bonuses, block and
unblock, message workers, finish and clean up. Providers move people and money; the
judgments stay in EvalHub's database. Every call that spends money goes through
`ledger.once`, which logs it (who, when, what, the platform's answer) under a unique
idempotency key, so a retried launch or bonus never pays twice.

The local provider (a shared link) does the platform side as no-ops, which makes the
whole loop testable offline.
"""

from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

from ..provider_settings import provider_config

CENT = Decimal("0.01")


def money(value) -> Decimal:
    return Decimal(value).quantize(CENT, rounding=ROUND_HALF_UP)


class CrowdError(Exception):
    """A platform call that cannot go ahead or failed; the message is for the researcher."""


class ConfirmationRequired(CrowdError):
    """Spending real money needs an explicit yes (`--yes`, a confirmed form)."""


class PlatformRefused(CrowdError):
    """The platform answered with an error: nothing was done there, retrying is safe."""


class BadArrival(Exception):
    """A start link whose platform parameters are not in the platform's id format (or name
    a platform the campaign is not on): the message says which parameter, for the visitor."""


@dataclass(frozen=True)
class Arrival:
    """A participant as the start link's query string names them."""

    provider: str
    external_id: str
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class CostEstimate:
    """What a campaign costs on its platform, in the platform's currency."""

    currency: str
    places: int  # paid submissions: batches x redundancy
    reward_per_place: Decimal
    rewards: Decimal
    fees: Decimal
    balance: Decimal | None = None  # None: the platform does not tell

    @property
    def total(self) -> Decimal:
        return self.rewards + self.fees

    @property
    def affordable(self) -> bool | None:
        return None if self.balance is None else self.balance >= self.total

    def lines(self) -> list[str]:
        out = [
            f"{self.places} paid submissions x {self.reward_per_place} {self.currency}"
            f" = {self.rewards} {self.currency}",
            f"platform fees: {self.fees} {self.currency}",
            f"total: {self.total} {self.currency}",
        ]
        if self.balance is not None:
            verdict = "enough" if self.affordable else "NOT enough"
            out.append(f"account balance: {self.balance} {self.currency} ({verdict})")
        return out


@dataclass
class SyncReport:
    """What one sync changed in EvalHub's database."""

    submitted: int = 0
    approved: int = 0
    rejected: int = 0
    returned: int = 0
    expired: int = 0
    # Platform submissions no EvalHub assignment matches (e.g. a study preview).
    unmatched: list[str] = field(default_factory=list)

    def __str__(self):
        return (
            f"submitted {self.submitted}, approved {self.approved}, rejected {self.rejected},"
            f" returned {self.returned}, expired {self.expired}, unmatched {len(self.unmatched)}"
        )


class CrowdProvider:
    key = ""
    # Sources allowed in `Content-Security-Policy: frame-ancestors` for task pages.
    frame_ancestors: tuple[str, ...] = ("'self'",)
    # Whether launching spends money (and so needs a confirmation and a cost estimate).
    spends_money = False
    # Whether one participant may do several batches (MTurk: several HITs; Prolific: one
    # submission per study).
    allows_more_batches = True

    def config(self, campaign) -> dict:
        """The campaign's `provider_config` checked against this provider's declared
        schema (annotation/provider_settings.py), defaults filled in."""
        return provider_config(self.key, campaign.provider_config)

    def _save_config(self, campaign, **values) -> None:
        """Remember ids made on the platform; what the schema does not declare is refused."""
        stored = {**(campaign.provider_config or {}), **values}
        provider_config(self.key, stored)
        campaign.provider_config = stored
        type(campaign).objects.filter(pk=campaign.pk).update(provider_config=stored)

    def identify(self, request) -> Arrival | None:
        raise NotImplementedError

    def completion_url(self, campaign, assignment) -> str | None:
        template = campaign.completion_redirect_url
        return template.replace("{code}", assignment.completion_code) if template else None

    def estimate(self, campaign) -> CostEstimate:
        """Rewards and fees for every place of the campaign (nothing is spent)."""
        places = campaign.batches.count() * campaign.redundancy
        reward = money(campaign.reward_per_batch)
        return CostEstimate("", places, reward, money(reward * places), Decimal("0.00"))

    def launch(self, campaign, *, actor=None, confirm: bool = False) -> None:
        """Publish the campaign on the platform (nothing to do for a shared link).
        Raises ConfirmationRequired when real money would move and `confirm` is False."""

    def pause(self, campaign, *, actor=None) -> None:
        """Stop the platform from sending new participants."""

    def sync(self, campaign, *, actor=None, now=None) -> SyncReport:
        """Bring EvalHub's assignments up to date with the platform's submissions."""
        return SyncReport()

    def approve(self, assignment, *, actor=None, feedback: str = "") -> None:
        """Pay for an assignment on the platform."""

    def reject(self, assignment, reason: str, *, actor=None) -> None:
        """Refuse payment for an assignment, with the reason the worker will read."""

    def bonus(self, assignment, amount: Decimal, reason: str, *, key: str, actor=None) -> None:
        """Pay `amount` on top of the reward; `key` names this bonus (the same key never
        pays twice)."""

    def block(self, worker, reason: str, *, campaign, actor=None) -> None:
        """Keep the worker out of the researcher's tasks on the platform."""

    def unblock(self, worker, *, campaign, actor=None) -> None:
        """Lift a block."""

    def message(self, campaign, workers, subject: str, body: str, *, actor=None) -> None:
        """Send the workers a message through the platform."""

    def finish(self, campaign, *, actor=None) -> None:
        """Stop recruiting on the platform for good."""

    def cleanup(self, campaign, *, actor=None) -> None:
        """Remove what the platform keeps once everything is reviewed and paid."""
