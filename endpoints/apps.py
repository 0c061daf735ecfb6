from django.apps import AppConfig


class EndpointsConfig(AppConfig):
    """Calling a model: below annotation (chat campaigns), tournaments and judging, which
    all ask their endpoints through this app's client."""

    name = "endpoints"
