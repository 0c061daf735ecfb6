from django.apps import AppConfig


class PortabilityConfig(AppConfig):
    name = "portability"
    verbose_name = "Export and import of a whole study"
