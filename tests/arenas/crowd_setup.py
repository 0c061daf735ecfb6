"""An arena ready for a paid crowd, and the local stand-ins for the platforms the crowd
tests launch on: Prolific's fake API on 127.0.0.1 (tests/annotation/crowd/fake_prolific.py)
and MTurk through botocore's Stubber on a real client."""

from contextlib import contextmanager
from decimal import Decimal

import boto3
from botocore.stub import Stubber

from annotation.crowd import PROVIDERS
from annotation.crowd.mturk import SANDBOX_ENDPOINT, MTurkProvider
from annotation.crowd.prolific import ProlificProvider
from arenas.crowd import LaunchSetup
from arenas.crowd_models import GoldBattle
from tests import factories
from tests.annotation.crowd.fake_prolific import FakeProlific
from tests.arenas.builders import NOWHERE, arena, bot_system

PUBLIC = "https://evalhub.example.org"
GOLD = [
    ("What is 2 + 2?", "2 + 2 is 4.", "2 + 2 is 5.", "first"),
    ("Name the capital of France.", "Berlin is the capital of France.", "Paris.", "second"),
]


@contextmanager
def prolific_fake(settings, monkeypatch):
    monkeypatch.setitem(PROVIDERS, "prolific", ProlificProvider(sleep=lambda s: None))
    with FakeProlific() as server:
        settings.EVALHUB_PROLIFIC_API_URL = server.url
        settings.EVALHUB_PROLIFIC_TOKEN = "sekrit"
        settings.EVALHUB_PUBLIC_URL = PUBLIC
        settings.EVALHUB_PROLIFIC_SERVICE_FEE = 0.5
        yield server


@contextmanager
def mturk_stubber(settings, monkeypatch):
    settings.EVALHUB_PUBLIC_URL = PUBLIC
    settings.EVALHUB_MTURK_ENDPOINT_URL = ""
    client = boto3.client(
        "mturk",
        region_name="us-east-1",
        endpoint_url=SANDBOX_ENDPOINT,
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )
    provider = MTurkProvider(client_factory=lambda sandbox: client, sleep=lambda s: None)
    monkeypatch.setitem(PROVIDERS, "mturk", provider)
    with Stubber(client) as stubber:
        yield stubber
        stubber.assert_no_pending_responses()


def crowd_arena(owner=None, *, urls=(NOWHERE, NOWHERE), gold=GOLD, **fields):
    """An arena of `owner` with two systems (endpoints at `urls`) and gold battles."""
    owner = owner or factories.user()
    systems = [
        bot_system(owner, url=url, slug=f"crowd-bot-{n}", name=name)
        for n, (url, name) in enumerate(zip(urls, ("Alpha", "Beta"), strict=True))
    ]
    made = arena(owner, systems=systems, **fields)
    for prompt, first, second, better in gold:
        GoldBattle.objects.create(
            arena=made, prompt=prompt, first=first, second=second, better=better
        )
    return made


def setup(**fields) -> LaunchSetup:
    values = {
        "provider": "prolific",
        "participants": 3,
        "battles_per_participant": 4,
        "reward_per_participant": Decimal("1.00"),
        "budget": Decimal("10.00"),
        "gold_per_batch": 1,
        "time_limit_minutes": 30,
        **fields,
    }
    return LaunchSetup(**values)
