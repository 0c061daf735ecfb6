"""A local OpenAI-compatible server that streams (127.0.0.1, port 0), for the async client.

`POST /v1/chat/completions` answers what its script returns for the request's JSON: a
Stream of `events` (each written as one `data: ...` server-sent event, in its own HTTP
chunk, `pause` seconds apart), then `data: [DONE]` unless `done` is off, then the end of
the chunked body unless `cut` (the connection is then closed mid-body). Or any status,
headers and body at once (`Stream(status=429, ...)`). The server records each payload,
and sets `disconnected` when a client went away while it was still writing.
"""

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler

from tests.local_server import LocalServer, ServerPool


@dataclass(frozen=True)
class Stream:
    events: tuple[str, ...] = ()
    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""  # a whole, non-streamed body (an error, or a server that ignores stream)
    content_type: str = "text/event-stream"
    pause: float = 0.0
    done: bool = True
    cut: bool = False


def delta(text: str, finish_reason=None) -> str:
    choice = {"index": 0, "delta": {"content": text}, "finish_reason": finish_reason}
    return json.dumps({"object": "chat.completion.chunk", "choices": [choice]})


def usage(prompt: int, completion: int) -> str:
    return json.dumps(
        {"choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion}}
    )


def words(*pieces: str, **options) -> Callable[[dict], Stream]:
    """A script streaming `pieces`, then the tokens used (one per piece, 7 for the prompt)."""
    events = (*(delta(p) for p in pieces), usage(7, len(pieces)))
    return lambda payload: Stream(events, **options)


class FakeStreamingOpenAI(LocalServer):
    def __init__(self, script: Callable[[dict], Stream]):
        self.script = script
        self.requests: list[dict] = []
        self.disconnected = threading.Event()
        super().__init__(self._handler(), daemon_threads=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                payload = json.loads(self.rfile.read(length))
                server.requests.append(payload)
                reply = server.script(payload)
                self.send_response(reply.status)
                for name, value in reply.headers:
                    self.send_header(name, value)
                if reply.body or reply.status != 200:
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                    return
                self.send_header("Content-Type", reply.content_type)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                events = list(reply.events) + (["[DONE]"] if reply.done else [])
                try:
                    for event in events:
                        self._chunk(f"data: {event}\n\n".encode())
                        time.sleep(reply.pause)
                    if reply.cut:
                        self.close_connection = True
                        return
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    server.disconnected.set()
                    self.close_connection = True

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

            def log_message(self, format, *args):
                pass

        return Handler


class StreamingPool(ServerPool):
    server_class = FakeStreamingOpenAI
