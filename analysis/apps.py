from django.apps import AppConfig


class AnalysisConfig(AppConfig):
    name = "analysis"

    def ready(self):
        # Connects the receiver that analyses a tournament when its campaign finishes.
        from analysis.runs import signals  # noqa: F401
