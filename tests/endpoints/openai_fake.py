"""A local OpenAI-compatible chat completions server for the tests (127.0.0.1, port 0).

It answers `POST <base>/chat/completions` (base: /v1) with what its script returns for the
request's JSON, over HTTP/1.1 keep-alive, and records every request's path, payload,
headers and client port. Scripts (payload -> Reply):
- completion(text): a well-formed chat.completion whose choices[0].message.content is text;
- counting: "<model>: heard <n>, <m> mine" where n is the number of non-system messages
  and m the number of "assistant" ones, so turn p of a collected conversation reads
  "<model>: heard p, p//2 mine" when the history arrived whole with the right roles;
- echo: "echo: <content of the last message>";
- then(first, script, times=1): `first` for the first `times` requests, then `script`
  (RATE_LIMITED(seconds) = 429 with Retry-After, MALFORMED, EMPTY_CHOICES, ...);
- trickle(script, interval): the body one byte every `interval` seconds;
- honouring_response_format(script): a request with `response_format` (OpenAI's structured
  output) is answered with JSON that follows its schema (each enum's first value), one
  without it by `script`;
- refusing_response_format(script): a request with `response_format` is refused with the
  400 OpenAI answers for a model without structured output, one without it by `script`;
- anything else: a Reply built by hand.
"""

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler

from tests.local_server import LocalServer, ServerPool


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()
    trickle: float = 0.0  # seconds between bytes of the body; 0 sends it at once


def completion(text, *, model: str = "fake") -> Reply:
    body = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
    return Reply(body=json.dumps(body).encode())


def dialogue(payload: dict) -> list[dict]:
    return [m for m in payload["messages"] if m["role"] != "system"]


def counting(payload: dict) -> Reply:
    messages = dialogue(payload)
    mine = sum(m["role"] == "assistant" for m in messages)
    return completion(f"{payload['model']}: heard {len(messages)}, {mine} mine")


def echo(payload: dict) -> Reply:
    return completion(f"echo: {payload['messages'][-1]['content']}"[:300])


def rate_limited(retry_after: str) -> Reply:
    return Reply(429, b'{"error": {"message": "rate limited"}}', (("Retry-After", retry_after),))


MALFORMED = Reply(200, b'{"choices": [{"message": ')
EMPTY_CHOICES = Reply(200, json.dumps({"object": "chat.completion", "choices": []}).encode())
NULL_CONTENT = Reply(
    200, json.dumps({"choices": [{"message": {"role": "assistant", "content": None}}]}).encode()
)


RESPONSE_FORMAT_REFUSED = Reply(
    400,
    json.dumps(
        {
            "error": {
                "message": "Invalid parameter: 'response_format' of type 'json_schema' is not "
                "supported with this model.",
                "type": "invalid_request_error",
                "param": "response_format",
                "code": None,
            }
        }
    ).encode(),
)


def following(schema: dict):
    """The simplest value `schema` allows: each enum's first value, every property of an
    object, empty arrays."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        return {name: following(sub) for name, sub in schema.get("properties", {}).items()}
    return {"array": [], "integer": 0, "number": 0, "boolean": False}.get(kind, "")


def honouring_response_format(script: Callable[[dict], Reply]):
    def run(payload: dict) -> Reply:
        if "response_format" not in payload:
            return script(payload)
        schema = payload["response_format"]["json_schema"]["schema"]
        return completion(json.dumps(following(schema)))

    return run


def refusing_response_format(script: Callable[[dict], Reply]):
    return lambda payload: (
        RESPONSE_FORMAT_REFUSED if "response_format" in payload else script(payload)
    )


def then(first: Reply, script: Callable[[dict], Reply], times: int = 1):
    count = 0
    lock = threading.Lock()

    def run(payload: dict) -> Reply:
        nonlocal count
        with lock:
            count += 1
            early = count <= times
        return first if early else script(payload)

    return run


def trickle(script: Callable[[dict], Reply], interval: float):
    return lambda payload: replace(script(payload), trickle=interval)


class FakeOpenAI(LocalServer):
    def __init__(self, script: Callable[[dict], Reply]):
        self.script = script
        self.requests: list[dict] = []
        self.paths: list[str] = []
        self.headers: list[dict] = []
        self.ports: list[int] = []
        self._lock = threading.Lock()
        super().__init__(self._handler(), daemon_threads=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, so connection reuse can be seen

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                payload = json.loads(self.rfile.read(length))
                with server._lock:
                    server.requests.append(payload)
                    server.paths.append(self.path)
                    server.headers.append(dict(self.headers))
                    server.ports.append(self.client_address[1])
                if self.path != "/v1/chat/completions":
                    reply = Reply(404, b'{"error": {"message": "not found"}}')
                else:
                    reply = server.script(payload)
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply.body)))
                for name, value in reply.headers:
                    self.send_header(name, value)
                self.end_headers()
                if not reply.trickle:
                    self.wfile.write(reply.body)
                    return
                for byte in reply.body:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(reply.trickle)

            def log_message(self, format, *args):
                pass

        return Handler


class FakePool(ServerPool):
    server_class = FakeOpenAI
