from django.apps import AppConfig


class JudgingConfig(AppConfig):
    name = "judging"
    verbose_name = "Automatic judges"

    def ready(self):
        # Connects the receivers that keep a used rubric as it was and keep a judge's
        # endpoint named after it and deleted with it.
        from . import signals  # noqa: F401
