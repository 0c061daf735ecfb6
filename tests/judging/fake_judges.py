"""Scripts for the OpenAI-compatible fake server (tests/endpoints/openai_fake.py) that
play a judge: scripted JSON answers, malformed text then good, refusals, slow replies."""

import json
import threading
import time

from tests.endpoints import openai_fake


def prompt_of(payload: dict) -> str:
    return payload["messages"][1]["content"]


def answers(*texts, usage=(120, 8)):
    """Each request gets the next text (the last one repeats), with the given usage."""
    count = 0
    lock = threading.Lock()

    def run(payload):
        nonlocal count
        with lock:
            text = texts[min(count, len(texts) - 1)]
            count += 1
        text = text if isinstance(text, str) else json.dumps(text)
        return with_usage(text, usage)

    return run


def with_usage(text: str, usage) -> openai_fake.Reply:
    body = {
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
    }
    if usage is not None:
        body["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1]}
    return openai_fake.Reply(body=json.dumps(body).encode())


REFUSAL = openai_fake.Reply(
    body=json.dumps(
        {
            "choices": [
                {
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "refusal": "I can't help with that.",
                    }
                }
            ]
        }
    ).encode()
)


class Slow:
    """Answers `text` after `seconds`, counting the most requests it had in flight."""

    def __init__(self, text, seconds: float):
        self.text = text if isinstance(text, str) else json.dumps(text)
        self.seconds = seconds
        self.in_flight = self.most_in_flight = 0
        self.lock = threading.Lock()

    def __call__(self, payload):
        with self.lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        time.sleep(self.seconds)
        with self.lock:
            self.in_flight -= 1
        return with_usage(self.text, (10, 2))
