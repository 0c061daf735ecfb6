"""What the tests' fake servers share: an HTTP server on 127.0.0.1 (port 0) served from a
thread, and a pool that starts servers on demand and stops them all at the end of a
`with` block; and uvicorn serving the project's ASGI application the same way (the
production `arena` service, for the arena's and the chats' streams)."""

import asyncio
import socket
import threading
import time
from collections.abc import Callable
from http.server import ThreadingHTTPServer

import uvicorn


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


class UvicornThread:
    """uvicorn serving the project's ASGI application on 127.0.0.1, from a thread."""

    def __init__(self):
        from evalhub.asgi import application  # imported late: Django is set up by then

        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        config = uvicorn.Config(application, lifespan="off", log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=lambda: asyncio.run(self.server.serve(sockets=[self.socket])), daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.socket.getsockname()[1]}"

    def __enter__(self):
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(10)
        self.socket.close()
