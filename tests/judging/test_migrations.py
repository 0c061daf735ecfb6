"""Judges registered before they had endpoints of their own: each gets one, a system made
only to register a judge disappears, a chatbot a judge also used stays; and back."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [
    ("judging", "0006_automatic_judgment_output_path"),
    ("endpoints", "0010_endpoint_structured_output"),
]
AFTER = [("judging", "0008_judge_owns_endpoint")]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    executor.loader.build_graph()
    return executor.loader.project_state(targets).apps


def leaf_nodes():
    return MigrationExecutor(connection).loader.graph.leaf_nodes()


@pytest.mark.django_db(transaction=True)
def test_judge_systems_become_judge_endpoints_and_come_back_as_private_systems():
    try:
        apps = migrate(BEFORE)
        User = apps.get_model("auth", "User")
        System = apps.get_model("evalhub", "System")
        Endpoint = apps.get_model("endpoints", "BotEndpoint")
        Judge = apps.get_model("judging", "Judge")
        Usage = apps.get_model("endpoints", "EndpointUsage")
        ada = User.objects.create(username="ada")
        only_judge = System.objects.create(slug="judge-model", name="Judge model", owner=ada)
        chatbot = System.objects.create(slug="chatbot", name="Chatbot", owner=ada)
        conversation = apps.get_model("evalhub", "Conversation").objects.create(external_id="c1")
        apps.get_model("evalhub", "Speaker").objects.create(
            conversation=conversation, index=0, system=chatbot
        )
        fields = {"protocol": "openai", "url": "https://llm.example.org/v1", "model_name": "m"}
        judged = Endpoint.objects.create(system=only_judge, auth_token="sk-judge", **fields)
        chatting = Endpoint.objects.create(system=chatbot, auth_token="sk-chat", **fields)
        Usage.objects.create(endpoint=judged, day="2026-11-01", requests=5)
        first = Judge.objects.create(slug="first", name="First", owner=ada, endpoint=judged)
        second = Judge.objects.create(slug="second", name="Second", owner=ada, endpoint=chatting)

        apps = migrate(AFTER)
        System = apps.get_model("evalhub", "System")
        Judge = apps.get_model("judging", "Judge")
        Endpoint = apps.get_model("endpoints", "BotEndpoint")
        # The system made only for the judge is gone; its endpoint, usage included, is the
        # judge's now.
        assert list(System.objects.values_list("slug", flat=True)) == ["chatbot"]
        first = Judge.objects.get(pk=first.pk)
        assert first.endpoint_id == judged.pk
        assert (first.endpoint.system_id, first.endpoint.owner_id) == (None, ada.pk)
        assert (first.endpoint.name, first.endpoint.auth_token) == ("First", "sk-judge")
        assert first.endpoint.usage.get().requests == 5
        # The chatbot keeps its endpoint; the judge that used it has a copy of its own.
        second = Judge.objects.get(pk=second.pk)
        assert second.endpoint_id != chatting.pk
        assert Endpoint.objects.get(pk=chatting.pk).system_id == chatbot.pk
        copy = second.endpoint
        assert (copy.system_id, copy.owner_id, copy.name) == (None, ada.pk, "Second")
        assert (copy.url, copy.model_name, copy.auth_token) == (
            "https://llm.example.org/v1",
            "m",
            "sk-chat",
        )

        apps = migrate(BEFORE)
        Endpoint = apps.get_model("endpoints", "BotEndpoint")
        # Every endpoint has a system again: the judges' ones each a private one of their own.
        for judge in apps.get_model("judging", "Judge").objects.select_related("endpoint__system"):
            system = judge.endpoint.system
            assert system.visibility == "private" and system.owner_id == ada.pk
            assert system.name == judge.name
        assert Endpoint.objects.get(pk=judged.pk).auth_token == "sk-judge"
    finally:
        migrate(leaf_nodes())
