from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    """Webhooks: owners' subscriptions to events, signed deliveries and their log. Above
    endpoints (it sends through their outbound guard), below annotation and every app whose
    events it carries (they call webhooks.events.emit)."""

    name = "webhooks"
