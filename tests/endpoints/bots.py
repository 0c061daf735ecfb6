"""Scripted bots for the tests: real HTTP servers on 127.0.0.1 (ThreadingHTTPServer, port 0).

A script maps a request payload to a Reply. Scripts:
- echo: "echo: <last turn's text>";
- counting: "count <number of turns received> as <speaker index>", so the text of turn p
  reads "count p as p % 2" when the history arrived whole and the speaker is right;
- fail_first(script, failure): `failure` on the first request of each conversation id,
  then `script` (HTTP 500, bad JSON or a reply slower than the client's timeout);
- always(status): that HTTP status every time;
- slow(script, seconds): `script` after a pause, to hold requests in flight.
Each server records the payloads and headers it received and the most requests it ever had
in flight at once.
"""

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler

from tests.local_server import LocalServer, ServerPool


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: bytes = b""
    delay: float = 0.0
    headers: tuple[tuple[str, str], ...] = ()


def text(value) -> Reply:
    return Reply(body=json.dumps({"text": value}).encode())


def echo(payload: dict) -> Reply:
    return text(f"echo: {payload['turns'][-1]['text']}"[:300])


def counting(payload: dict) -> Reply:
    return text(f"count {len(payload['turns'])} as {payload['speaker']}")


SERVER_ERROR = Reply(500, b"internal error")
BAD_JSON = Reply(200, b"<html>proxy error</html>")


def too_slow(seconds: float) -> Reply:
    return Reply(200, json.dumps({"text": "too late"}).encode(), delay=seconds)


def fail_first(script: Callable[[dict], Reply], failure: Reply) -> Callable[[dict], Reply]:
    seen: set[str] = set()
    lock = threading.Lock()

    def run(payload: dict) -> Reply:
        with lock:
            first = payload["conversation_id"] not in seen
            seen.add(payload["conversation_id"])
        return failure if first else script(payload)

    return run


def always(status: int = 500) -> Callable[[dict], Reply]:
    return lambda payload: Reply(status, b"broken")


def slow(script: Callable[[dict], Reply], seconds: float) -> Callable[[dict], Reply]:
    def run(payload: dict) -> Reply:
        reply = script(payload)
        return Reply(reply.status, reply.body, seconds, reply.headers)

    return run


class BotServer(LocalServer):
    def __init__(self, script: Callable[[dict], Reply]):
        self.script = script  # may be swapped while running, e.g. to "fix" a bot
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        super().__init__(self._handler())

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/reply"

    def conversations(self) -> set[str]:
        return {r["conversation_id"] for r in self.requests}

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                payload = json.loads(self.rfile.read(length))
                with server._lock:
                    server.requests.append(payload)
                    server.headers.append(dict(self.headers))
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    reply = server.script(payload)
                    time.sleep(reply.delay)
                finally:
                    with server._lock:
                        server.in_flight -= 1
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply.body)))
                for name, value in reply.headers:
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(reply.body)

            def log_message(self, format, *args):
                pass

        return Handler


class BotPool(ServerPool):
    server_class = BotServer
