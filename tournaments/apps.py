from django.apps import AppConfig
from django.db.models import Q


def _unpublished_tournament_campaigns() -> Q:
    return Q(tournament__isnull=False, tournament__published=False)


class TournamentsConfig(AppConfig):
    name = "tournaments"

    def ready(self):
        # Connects the receiver that finishes a tournament when its campaign finishes.
        # An unpublished tournament's campaign stays private (annotation.models.private_q).
        from annotation.models import register_private_rule

        from . import signals  # noqa: F401

        register_private_rule(_unpublished_tournament_campaigns)
