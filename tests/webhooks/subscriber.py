"""A webhook subscriber on 127.0.0.1 (a thread's http.server): it keeps every request it
receives (headers and body, as bytes) and answers the statuses it is given in turn, then
200."""

import threading
from http.server import BaseHTTPRequestHandler

from standardwebhooks import Webhook

from tests.local_server import LocalServer


class Subscriber(LocalServer):
    def __init__(self, statuses=()):
        self.received: list[tuple[dict[str, str], bytes]] = []
        self.statuses = list(statuses)
        self.lock = threading.Lock()
        subscriber = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with subscriber.lock:
                    subscriber.received.append((dict(self.headers.items()), body))
                    status = subscriber.statuses.pop(0) if subscriber.statuses else 200
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        super().__init__(Handler, daemon_threads=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks"

    def verified(self, secret: str) -> list[dict]:
        """Every message received, verified with the Standard Webhooks library (raises
        WebhookVerificationError on a bad signature)."""
        return [Webhook(secret).verify(body, headers) for headers, body in self.received]

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
