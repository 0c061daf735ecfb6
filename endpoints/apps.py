from django.apps import AppConfig


class EndpointsConfig(AppConfig):
    """Calling a model: below annotation (chat campaigns), tournaments and judging, which
    all ask their endpoints through this app's client."""

    name = "endpoints"

    def ready(self):
        from django.core.signals import request_finished

        from .dbcalls import close_asgi_request_connection

        request_finished.connect(close_asgi_request_connection)
