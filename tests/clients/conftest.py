"""The client against a real HTTP server: pytest-django's live_server, in this process, so
that the tests build rows with the factories and check them in the database."""

import pytest

from evalhub_client import EvalHub
from tests import factories


@pytest.fixture(autouse=True)
def _no_saved_settings(tmp_path, monkeypatch):
    """Neither the environment nor a config file of the machine's user reaches the tests."""
    monkeypatch.delenv("EVALHUB_URL", raising=False)
    monkeypatch.delenv("EVALHUB_TOKEN", raising=False)
    monkeypatch.setenv("EVALHUB_CONFIG", str(tmp_path / "evalhub" / "config.toml"))


@pytest.fixture
def hub_for(live_server):
    """`hub_for(user)`: a client of the live server with a new token of `user` (None:
    signed out). No retries: a test sees the first answer."""
    clients = []

    def make(user=None, **options):
        token = factories.api_token(user) if user is not None else ""
        options.setdefault("retries", 0)
        client = EvalHub(live_server.url, token=token, **options)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()
