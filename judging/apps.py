from django.apps import AppConfig


class JudgingConfig(AppConfig):
    name = "judging"
    verbose_name = "Automatic judges"

    def ready(self):
        # Connects the receiver that keeps a used rubric as it was.
        from . import signals  # noqa: F401
