"""Judges are models, not chatbots: each judge gets an endpoint of its own, of no system.

A judge whose system's endpoint served nothing but that judge, on a system nothing else
refers to (no submission, conversation, campaign, tournament, arena...: a system made only
to register the judge), takes that endpoint over, with its usage and calls, and the system
is deleted: it disappears from the systems lists. Any other judge gets a copy of the
endpoint (token included) and the system stays as it was.

Reversible, though not to the same rows: the old schema needs every endpoint to belong to
a system, so going back gives each endpoint of no system a new private system named after
it (the deleted systems' descriptions and links are not kept anywhere to restore).
"""

from django.db import migrations

# Copied to a judge's own endpoint; the rest (id, owner kind, name, updated) is its own.
NOT_COPIED = {"id", "system", "owner", "name", "updated"}


def _only_an_endpoint(system, BotEndpoint) -> bool:
    """Nothing but its endpoint refers to `system`."""
    for rel in system._meta.related_objects:
        if rel.related_model is BotEndpoint:
            continue
        # A foreign key, one-to-one or many-to-many field of another model naming it.
        if rel.related_model._default_manager.filter(**{rel.field.name: system}).exists():
            return False
    return True


def judges_get_own_endpoints(apps, schema_editor):
    Judge = apps.get_model("judging", "Judge")
    BotEndpoint = apps.get_model("endpoints", "BotEndpoint")
    copied = [f.name for f in BotEndpoint._meta.concrete_fields if f.name not in NOT_COPIED]
    for judge in Judge.objects.select_related("endpoint__system").order_by("pk"):
        endpoint = judge.endpoint
        if endpoint.system_id is None:
            continue
        system = endpoint.system
        shared = Judge.objects.filter(endpoint=endpoint).exclude(pk=judge.pk).exists()
        if not shared and _only_an_endpoint(system, BotEndpoint):
            endpoint.system = None
            endpoint.owner_id = judge.owner_id
            endpoint.name = judge.name
            endpoint.save()
            system.delete()
            continue
        own = BotEndpoint.objects.create(
            owner_id=judge.owner_id,
            name=judge.name,
            **{name: getattr(endpoint, name) for name in copied},
        )
        judge.endpoint = own
        judge.save(update_fields=["endpoint"])


def systems_for_endpoints(apps, schema_editor):
    BotEndpoint = apps.get_model("endpoints", "BotEndpoint")
    System = apps.get_model("evalhub", "System")
    for endpoint in BotEndpoint.objects.filter(system__isnull=True).order_by("pk"):
        base = f"endpoint-{endpoint.pk}-model"
        slug, n = base, 1
        while System.objects.filter(slug=slug).exists():
            n += 1
            slug = f"{base}-{n}"
        # By id: going back over later migrations of other apps, the historical System
        # class the foreign key knows may not be the one `apps` gives here.
        endpoint.system_id = System.objects.create(
            slug=slug,
            name=endpoint.name or slug,
            owner_id=endpoint.owner_id,
            visibility="private",
            description="The model of an automatic judge.",
        ).pk
        endpoint.owner = None
        endpoint.name = ""
        endpoint.save()


class Migration(migrations.Migration):
    dependencies = [
        ("endpoints", "0011_endpoint_of_system_or_owner"),
        ("evalhub", "0014_notice_kinds_for_admins"),
        ("judging", "0006_automatic_judgment_output_path"),
    ]

    operations = [migrations.RunPython(judges_get_own_endpoints, systems_for_endpoints)]
