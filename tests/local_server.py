"""What the tests' fake servers share: an HTTP server on 127.0.0.1 (port 0) served from a
thread, and a pool that starts servers on demand and stops them all at the end of a
`with` block."""

import threading
from collections.abc import Callable
from http.server import ThreadingHTTPServer


class LocalServer:
    def __init__(self, handler_class, *, daemon_threads: bool = False):
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler_class)
        self._httpd.daemon_threads = daemon_threads
        self._httpd.handle_error = lambda request, address: None  # clients that gave up
        # A short poll interval: shutdown() waits for the serving loop to notice.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    def start(self):
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


class ServerPool:
    """Subclasses name the `server_class`, built from a script."""

    server_class: type[LocalServer]

    def __init__(self):
        self.servers: list = []

    def start(self, script: Callable):
        server = self.server_class(script).start()
        self.servers.append(server)
        return server

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        for server in self.servers:
            server.stop()
