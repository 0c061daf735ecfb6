import pytest

from tests.endpoints import openai_fake


@pytest.fixture
def fake():
    """Starts OpenAI-compatible fake judges on 127.0.0.1; all stopped after the test."""
    with openai_fake.FakePool() as pool:
        yield pool.start
