"""``{% system_endpoint system %}``: the system's bot endpoint on its profile page, for its
owner and staff only (protocol, URL, model, budget; never the token)."""

from django import template

register = template.Library()


@register.inclusion_tag("endpoints/_system_endpoint.html", takes_context=True)
def system_endpoint(context, system):
    user = context["request"].user
    if not system.is_managed_by(user):
        return {"show": False}
    endpoint = getattr(system, "endpoint", None)
    return {"show": True, "system": system, "endpoint": endpoint}
