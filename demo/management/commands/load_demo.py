from django.core.management.base import BaseCommand

from demo.loader import load_demo

from ._accounts import account_lines

START_LINES = (
    "Where to start (sign in with an account above):",
    "  /                                   the home page: systems, tournaments, leaderboards",
    "  /leaderboards/                      the simulated Spot The Bot and A/B results",
    "  /results/campaigns/demo-abc-eval/   ABC-Eval results (likewise demo-likert, demo-comparative)",
    "  /arenas/demo-arena/                 the demo arena and its leaderboard",
    "  /work/demo-ab/?worker=you           annotate as a crowdworker named 'you'",
)


class Command(BaseCommand):
    help = (
        "Create the demo data (idempotent; existing accounts keep their passwords) and print "
        "the demo accounts."
    )

    def handle(self, *args, **options):
        accounts = load_demo()
        self.stdout.write(self.style.SUCCESS("Demo data is in place."))
        for line in account_lines(accounts):
            self.stdout.write(line)
        for line in START_LINES:
            self.stdout.write(line)
