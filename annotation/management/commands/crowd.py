"""`manage.py crowd estimate|launch|sync|pay|finish CAMPAIGN`: a campaign on its crowd platform."""

from django.core.management.base import BaseCommand, CommandError

from annotation.campaigns import (
    TransitionRefused,
    finish_on_platform,
    launch_campaign,
    place_on_platform,
)
from annotation.crowd import get_provider
from annotation.crowd.base import CrowdError
from annotation.crowd.review import pay_submitted
from annotation.models import Assignment, Campaign

PLATFORMS = ("mturk", "prolific")


class Command(BaseCommand):
    help = (
        "Estimate, launch, sync, pay or finish a campaign on its crowd platform. Launching "
        "and paying real money need --yes."
    )

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["estimate", "launch", "sync", "pay", "finish"])
        parser.add_argument("campaign", help="The campaign's slug.")
        parser.add_argument(
            "--provider",
            choices=PLATFORMS,
            help="Put the campaign on this platform (a campaign on its link keeps the link).",
        )
        where = parser.add_mutually_exclusive_group()
        where.add_argument("--sandbox", action="store_true", help="MTurk: the sandbox.")
        where.add_argument("--production", action="store_true", help="MTurk: the real site.")
        parser.add_argument("--yes", action="store_true", help="Confirm spending real money.")

    def handle(self, *args, action, campaign, provider, sandbox, production, yes, **options):
        try:
            target = Campaign.objects.get(slug=campaign)
        except Campaign.DoesNotExist as missing:
            raise CommandError(f"No campaign {campaign!r}.") from missing
        try:
            target = self._place(target, provider, sandbox, production)
        except TransitionRefused as refused:
            raise CommandError(str(refused)) from refused
        if target.provider not in PLATFORMS:
            raise CommandError(
                f"{target.slug} runs on its shared link only: give --provider mturk|prolific."
            )
        try:
            getattr(self, f"do_{action}")(target, yes)
        except (CrowdError, TransitionRefused) as refused:
            raise CommandError(str(refused)) from refused

    def _place(self, campaign, provider, sandbox, production):
        where = True if sandbox else False if production else None
        return place_on_platform(campaign, provider, where)

    def _needs_yes(self, campaign) -> bool:
        return not (campaign.provider == "mturk" and campaign.platform_sandbox)

    def do_estimate(self, campaign, yes):
        for line in get_provider(campaign.provider).estimate(campaign).lines():
            self.stdout.write(line)

    def do_launch(self, campaign, yes):
        campaign = launch_campaign(campaign, confirm=yes)
        where = "sandbox" if campaign.provider == "mturk" and campaign.platform_sandbox else ""
        self.stdout.write(
            f"{campaign.slug} is live on {campaign.provider} {where}".rstrip()
            + f" ({campaign.platform_ref})."
        )

    def do_sync(self, campaign, yes):
        report = get_provider(campaign.provider).sync(campaign)
        self.stdout.write(f"{campaign.slug}: {report}")

    def do_pay(self, campaign, yes):
        waiting = Assignment.objects.filter(
            campaign=campaign, status=Assignment.Status.SUBMITTED
        ).count()
        if waiting and self._needs_yes(campaign) and not yes:
            raise CommandError(
                f"Approving {waiting} submitted assignments pays real money: add --yes."
            )
        self.stdout.write(f"approved {pay_submitted(campaign)} assignments.")

    def do_finish(self, campaign, yes):
        waiting = finish_on_platform(campaign)
        if waiting:
            self.stdout.write(
                f"{campaign.slug} is finished; {waiting} submitted assignments still await "
                "review, so the platform's records are kept (run `crowd pay`, then finish again)."
            )
            return
        self.stdout.write(f"{campaign.slug} is finished and cleaned up on {campaign.provider}.")
