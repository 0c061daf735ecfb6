"""The arena's streams (issue 26): 1,000 concurrent streams (500 battles) relayed over ASGI,
against the thread-per-request path, in the same run.

Run: ``.venv/bin/python bench/bench_arena_streams.py`` (``--battles``, ``--systems``,
``--database``, ``--skip-threads``...; ``--help``). ``--smoke`` runs both phases with four
battles on SQLite and short answers, to show the script works (tests/bench runs it); its
figures mean nothing.

What runs, each its own process(es) on 127.0.0.1:

- **the models**: fake OpenAI-compatible servers (this script with ``--serve-models``, raw
  asyncio): each ``POST /v1/chat/completions`` is answered with ``--tokens`` (200)
  ``chat.completion.chunk`` events at ``--rate`` (50) tokens per second, then the usage,
  then ``data: [DONE]``. Every token's text is ``" t<n>@<microseconds>"``, the moment the
  server wrote it on the machine's monotonic clock (CLOCK_MONOTONIC, shared by every
  process), so the load client can tell how long each token took to reach it;
- **the arena**: production's ``arena`` service, ``uvicorn evalhub.asgi:application
  --workers 2 --no-proxy-headers`` (docker-compose.yml), DEBUG off, PostgreSQL with
  persistent connections (``--database``; a fresh database, dropped afterwards; SQLite
  with a printed note if PostgreSQL is unreachable), Redis as cache, sessions and Celery's
  broker (``--redis``: two database numbers, emptied), no Celery worker (a queued task
  stays in Redis: the benchmark counts them);
- **the reference**: the same arena served as production serves its pages,
  ``gunicorn evalhub.wsgi --workers 3 --threads 8`` (docker-compose.yml's ``web``), where
  a request that waits on a model holds one of the 24 threads for the whole answer: the
  chat campaigns' path (a WSGI view calling the bot in the request), and the arena's own
  fallback without the ASGI service (arenas/relay.py's ``ThreadedEvents``);
- **the load client** (this process, raw asyncio): signed-in voters (one account each)
  start ``--battles`` battles (``POST .../battles/new/`` as the page's script does), then
  open both sides' event streams at once (2 x 500 = 1,000 concurrent streams), read every
  event, and, once both sides of a battle ended, wait a voter's reading time (0.2-1.5 s)
  and vote (``POST .../vote/``).

Measured per server: each token's delay from the model's write to the client's read
(p50/p95/p99; target p95 < 50 ms), the time to the first byte and to the first token of
each stream, throughput (streams finished per second, tokens relayed per second), the
server's memory per open stream (RSS of the server's processes at the moment most
streams were open, minus before the streams, divided by the streams open then; target
< 100 KB) and each vote's latency (the vote stored, the leaderboard task queued in Redis
when it is the arena's first since the last computation, answered; p95 target < 100 ms).
Before any timing a warm-up battle is checked end to end (every token relayed, in order;
the answer stored; the vote stored), and at the end every battle's answers and votes are
checked in the database, and the queued leaderboard tasks counted in the broker.
Appends a JSON line to bench/results/arena_streams.jsonl.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

TARGET_TOKEN_P95_MS = 50.0
TARGET_KB_PER_STREAM = 100.0
TARGET_VOTE_P95_MS = 100.0
SECRET_KEY = "bench-arena-streams-not-a-secret-0123456789-abcdefghijklmnopqrstuvwxyz"
CSRF = "benchcsrftokenbenchcsrftoken0123"  # 32 characters: an unmasked CSRF secret
STAMP = re.compile(rb"t(\d+)@(\d+)")
VOTES = ["a_better", "b_better", "tie", "both_bad"]


def now_us() -> int:
    return time.monotonic_ns() // 1000


# The fake models ------------------------------------------------------------------------------


class _ModelConnection(asyncio.Protocol):
    """One client connection (kept alive): each request is answered by a stream of tokens
    that the server's ticker writes when they are due."""

    def __init__(self, server: _Models):
        self.server = server
        self.buffer = b""
        self.transport = None
        self.streaming = False

    def connection_made(self, transport):
        self.transport = transport

    def connection_lost(self, exc):
        self.server.active.pop(self, None)

    def data_received(self, data):
        self.buffer += data
        while not self.streaming:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buffer[:end].decode("latin-1").lower()
            length = 0
            for line in head.split("\r\n"):
                if line.startswith("content-length:"):
                    length = int(line.split(":", 1)[1])
            if len(self.buffer) < end + 4 + length:
                return
            self.buffer = self.buffer[end + 4 + length :]
            self.transport.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                b"cache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n"
            )
            self.streaming = True
            self.server.active[self] = [0, time.monotonic()]

    def send(self, payload: bytes) -> None:
        self.transport.write(b"%x\r\n%s\r\n" % (len(payload), payload))

    def finish(self) -> None:
        usage = {"prompt_tokens": 7, "completion_tokens": self.server.tokens}
        self.send(f"data: {json.dumps({'choices': [], 'usage': usage})}\n\n".encode())
        self.send(b"data: [DONE]\n\n")
        self.transport.write(b"0\r\n\r\n")
        self.streaming = False


class _Models:
    def __init__(self, tokens: int, rate: float):
        self.tokens = tokens
        self.interval = 1.0 / rate
        self.active: dict[_ModelConnection, list] = {}

    def tick(self) -> None:
        """Write every token that is due: a stream's token n is due `n / rate` seconds after
        its request arrived, so streams started at different moments write at different
        moments, as real models do."""
        now = time.monotonic()
        for connection, state in list(self.active.items()):
            sent, started = state
            while sent < self.tokens and started + sent * self.interval <= now:
                chunk = (
                    b'data: {"id":"bench","object":"chat.completion.chunk","model":"m",'
                    b'"choices":[{"index":0,"delta":{"content":" t%d@%d"},'
                    b'"finish_reason":null}]}\n\n' % (sent, now_us())
                )
                connection.send(chunk)
                sent += 1
            state[0] = sent
            if sent >= self.tokens:
                del self.active[connection]
                connection.finish()


async def _serve_models(port_file: str, tokens: int, rate: float) -> None:
    models = _Models(tokens, rate)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: _ModelConnection(models), "127.0.0.1", 0)
    Path(port_file).write_text(str(server.sockets[0].getsockname()[1]))
    step = min(0.005, 1.0 / rate / 4)
    while True:
        models.tick()
        await asyncio.sleep(step)


def serve_models(args) -> None:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    asyncio.run(_serve_models(args.serve_models, args.tokens, args.rate))


# Processes: their memory and CPU --------------------------------------------------------------


def family(pid: int) -> list[int]:
    """The process and its descendants still running."""
    found = [pid]
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            for child in (task / "children").read_text().split():
                found += family(int(child))
    except OSError:
        pass
    return found


def rss_kib(pid: int) -> int:
    """Resident memory of a process and its descendants, KiB (Linux's /proc)."""
    total = 0
    for member in family(pid):
        try:
            for line in Path(f"/proc/{member}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


def cpu_seconds(pid: int) -> float:
    total = 0.0
    for member in family(pid):
        try:
            fields = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            pass
    return total


def threads(pid: int) -> int:
    total = 0
    for member in family(pid):
        with contextlib.suppress(OSError):
            total += len(list(Path(f"/proc/{member}/task").iterdir()))
    return total


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_models(args, env) -> tuple[subprocess.Popen, int]:
    port_file = Path(f"/tmp/arena-bench-models-{os.getpid()}.port")
    port_file.unlink(missing_ok=True)
    command = [sys.executable, __file__, "--serve-models", str(port_file)]
    command += ["--tokens", str(args.tokens), "--rate", str(args.rate)]
    process = subprocess.Popen(command, cwd=ROOT, env=env)
    for _ in range(100):
        if port_file.exists() and port_file.read_text():
            port = int(port_file.read_text())
            port_file.unlink()
            return process, port
        if process.poll() is not None:
            raise SystemExit("the fake models exited before listening")
        time.sleep(0.05)
    process.terminate()
    raise SystemExit("the fake models did not listen within 5 s")


def start_server(kind: str, env: dict, port: int) -> subprocess.Popen:
    """The arena as production serves it: `asgi` (uvicorn, the arena service) or `threads`
    (gunicorn's threads, the web service)."""
    if kind == "asgi":
        command = [sys.executable, "-m", "uvicorn", "evalhub.asgi:application"]
        command += ["--host", "127.0.0.1", "--port", str(port), "--workers", "2"]
        command += ["--no-proxy-headers", "--timeout-graceful-shutdown", "5"]
        command += ["--log-level", "warning", "--backlog", "4096"]
    else:
        command = [sys.executable, "-m", "gunicorn", "evalhub.wsgi:application"]
        command += ["--bind", f"127.0.0.1:{port}", "--workers", "3", "--threads", "8"]
        command += ["--timeout", "60", "--log-level", "warning", "--backlog", "4096"]
    server = subprocess.Popen(command, cwd=ROOT, env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            status, _, _ = asyncio.run(http(port, "GET", "/healthz", timeout=2))
            if status == 200:
                return server
        except OSError:
            pass
        if server.poll() is not None:
            raise SystemExit(f"the {kind} server exited before answering")
        time.sleep(0.3)
    server.terminate()
    raise SystemExit(f"the {kind} server did not answer within 60 s")


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# The load client ------------------------------------------------------------------------------


async def http(port, method, path, body=b"", headers=None, timeout=30.0):
    """(status, headers text, body) of one request on a fresh connection."""
    reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), timeout)
    try:
        lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        if body:
            lines.append(f"Content-Length: {len(body)}")
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        raw = await asyncio.wait_for(reader.read(), timeout)
    finally:
        writer.close()
    head, _, content = raw.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    text = head.decode("latin-1")
    if "transfer-encoding: chunked" in text.lower():
        content = dechunked(content)
    return status, text, content


def dechunked(content: bytes) -> bytes:
    out, rest = b"", content
    while rest:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line.split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out += rest[:size]
        rest = rest[size + 2 :]
    return out


def voter_headers(session: str) -> dict:
    return {
        "Cookie": f"sessionid={session}; csrftoken={CSRF}",
        "X-CSRFToken": CSRF,
        "Accept": "application/json",
    }


@dataclass
class Stream:
    """What the client saw of one side's answer."""

    sent: float = 0.0  # monotonic seconds
    first_byte: float | None = None
    first_token: float | None = None
    ended: float | None = None
    status: str = ""
    tokens: list[int] = field(default_factory=list)  # the sequence numbers, as read
    delays_us: list[int] = field(default_factory=list)
    error: str = ""


class _StreamReader(asyncio.Protocol):
    """Reads one event stream, noting each token's delay as it arrives (no coroutine per
    read: a thousand of these must not cost the client more than the server)."""

    def __init__(self, stream: Stream, done: asyncio.Future):
        self.stream = stream
        self.done = done
        self.buffer = b""
        self.header = True

    def data_received(self, data):
        arrived = now_us()
        stream = self.stream
        if stream.first_byte is None:
            stream.first_byte = arrived / 1e6
        self.buffer += data
        if self.header:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            status = self.buffer[9:12]
            if status != b"200":
                stream.error = f"HTTP {status.decode()}"
                self._finish()
                return
            self.header = False
            self.buffer = self.buffer[end + 4 :]
        cut = self.buffer.rfind(b"\n\n")
        if cut < 0:
            return
        ready, self.buffer = self.buffer[: cut + 2], self.buffer[cut + 2 :]
        for event in ready.split(b"\n\n"):
            if b"event: piece" in event:
                for number, stamp in STAMP.findall(event):
                    if stream.first_token is None:
                        stream.first_token = arrived / 1e6
                    stream.tokens.append(int(number))
                    stream.delays_us.append(arrived - int(stamp))
            elif b"event: end" in event:
                match = re.search(rb'"status": "(\w+)"', event)
                stream.status = match.group(1).decode() if match else "?"
                stream.ended = arrived / 1e6
                self._finish()
                return

    def _finish(self):
        if not self.done.done():
            self.done.set_result(None)
        self.transport.close()

    def connection_made(self, transport):
        self.transport = transport

    def connection_lost(self, exc):
        if not self.done.done():
            self.stream.error = self.stream.error or f"closed early ({exc})"
            self.done.set_result(None)


async def read_stream(port: int, path: str, session: str, stream: Stream, timeout: float):
    loop = asyncio.get_running_loop()
    done = loop.create_future()
    stream.sent = time.monotonic()
    try:
        transport, _ = await loop.create_connection(
            lambda: _StreamReader(stream, done), "127.0.0.1", port
        )
    except OSError as error:
        stream.error = f"no connection: {error}"
        return
    headers = voter_headers(session)
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
    request += "".join(f"{k}: {v}\r\n" for k, v in headers.items() if k != "X-CSRFToken")
    transport.write((request + "\r\n").encode())
    try:
        await asyncio.wait_for(done, timeout)
    except TimeoutError:
        stream.error = stream.error or "no end within the timeout"
        transport.close()


@dataclass
class Battle:
    arena: str
    session: str
    url: str = ""
    streams: dict[str, Stream] = field(default_factory=dict)
    stream_paths: dict[str, str] = field(default_factory=dict)
    vote_url: str = ""
    vote_ms: float | None = None
    vote_error: str = ""
    start_ms: float | None = None


async def start_battle(port: int, battle: Battle, prompt: str) -> None:
    body = urlencode({"prompt": prompt}).encode()
    headers = voter_headers(battle.session)
    headers["Content-Type"] = "application/x-www-form-urlencoded"
    started = time.monotonic()
    status, _, content = await http(
        port, "POST", f"/arenas/{battle.arena}/battles/new/", body, headers, timeout=120
    )
    battle.start_ms = (time.monotonic() - started) * 1000
    if status != 200:
        raise SystemExit(f"starting a battle answered {status}: {content[:300]!r}")
    view = json.loads(content)
    battle.url = view["url"]
    battle.vote_url = view["vote_url"]
    battle.stream_paths = {side: view["turns"][0][side]["stream"] for side in ("a", "b")}


async def vote(port: int, battle: Battle, choice: str) -> None:
    body = urlencode({"vote": choice}).encode()
    headers = voter_headers(battle.session)
    headers["Content-Type"] = "application/x-www-form-urlencoded"
    started = time.monotonic()
    try:
        status, _, content = await http(port, "POST", battle.vote_url, body, headers, timeout=60)
    except (OSError, TimeoutError) as error:
        battle.vote_error = repr(error)
        return
    battle.vote_ms = (time.monotonic() - started) * 1000
    if status != 200:
        battle.vote_error = f"HTTP {status}: {content[:200]!r}"


async def battle_life(port, battle: Battle, rng: random.Random, timeout: float, votes: bool):
    """Both sides streamed at once; then, after reading, the vote."""
    battle.streams = {side: Stream() for side in ("a", "b")}
    await asyncio.gather(
        *(
            read_stream(
                port, battle.stream_paths[side], battle.session, battle.streams[side], timeout
            )
            for side in ("a", "b")
        )
    )
    if not votes or any(s.status != "done" for s in battle.streams.values()):
        return
    await asyncio.sleep(rng.uniform(0.2, 1.5))  # the voter reads both answers
    await vote(port, battle, rng.choice(VOTES))


class Sampler:
    """The server's resident memory every 50 ms, with the streams open at that moment."""

    def __init__(self, pid: int, battles: list[Battle]):
        self.pid, self.battles = pid, battles
        self.samples: list[tuple[int, int]] = []  # (open streams, KiB)
        self.running = True
        self.thread = threading.Thread(target=self.run, daemon=True)

    def open_streams(self) -> int:
        count = 0
        for battle in self.battles:
            for stream in battle.streams.values():
                if stream.first_byte is not None and stream.ended is None and not stream.error:
                    count += 1
        return count

    def run(self):
        while self.running:
            self.samples.append((self.open_streams(), rss_kib(self.pid)))
            time.sleep(0.05)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.running = False
        self.thread.join()


def percentile(values, q: float):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


async def run_phase(args, port, server_pid, battles: list[Battle], votes=True) -> dict:
    """Start the battles, then every stream at once; the figures of that run."""
    semaphore = asyncio.Semaphore(args.start_concurrency)

    async def started(battle, n):
        async with semaphore:
            await start_battle(port, battle, f"Tell me about the sea, part {n}.")

    t = time.monotonic()
    await asyncio.gather(*(started(b, n) for n, b in enumerate(battles)))
    start_seconds = time.monotonic() - t
    await asyncio.sleep(0.5)
    baseline = rss_kib(server_pid)
    threads_before = threads(server_pid)
    rng = random.Random(7)
    cpu_before = cpu_seconds(server_pid)
    with Sampler(server_pid, battles) as sampler:
        t0 = time.monotonic()
        await asyncio.gather(*(battle_life(port, b, rng, args.timeout, votes) for b in battles))
        elapsed = time.monotonic() - t0
    server_cpu = cpu_seconds(server_pid) - cpu_before
    streams = [s for b in battles for s in b.streams.values()]
    delays = [d / 1000 for s in streams for d in s.delays_us]
    done = [s for s in streams if s.status == "done" and len(s.tokens) == args.tokens]
    broken = [s for s in streams if s.status == "done" and s.tokens != list(range(args.tokens))]
    first_bytes = [(s.first_byte - s.sent) * 1000 for s in streams if s.first_byte]
    first_tokens = [(s.first_token - s.sent) * 1000 for s in streams if s.first_token]
    peak_open, peak_kib = max(sampler.samples, key=lambda sample: (sample[0], sample[1]))
    vote_ms = [b.vote_ms for b in battles if b.vote_ms is not None and not b.vote_error]
    errors = sorted({s.error for s in streams if s.error} | {b.vote_error for b in battles} - {""})
    return {
        "battles": len(battles),
        "streams": len(streams),
        "streams_done": len(done),
        "streams_out_of_order": len(broken),
        "errors": errors[:5],
        "battle_start_seconds": round(start_seconds, 2),
        "battle_start_p95_ms": _round(percentile([b.start_ms for b in battles], 95)),
        "tokens_relayed": len(delays),
        "token_p50_ms": _round(percentile(delays, 50)),
        "token_p95_ms": _round(percentile(delays, 95)),
        "token_p99_ms": _round(percentile(delays, 99)),
        "token_max_ms": _round(max(delays) if delays else None),
        "first_byte_p50_ms": _round(percentile(first_bytes, 50)),
        "first_byte_p95_ms": _round(percentile(first_bytes, 95)),
        "first_token_p50_ms": _round(percentile(first_tokens, 50)),
        "first_token_p95_ms": _round(percentile(first_tokens, 95)),
        "elapsed_seconds": round(elapsed, 2),
        "streams_per_second": round(len(done) / elapsed, 1),
        "tokens_per_second": round(len(delays) / elapsed),
        "server_cpu_seconds": round(server_cpu, 1),
        # Everything the server did for the streams and votes, per token relayed.
        "server_cpu_ms_per_token": _round(server_cpu * 1000 / len(delays) if delays else None),
        "rss_before_mib": round(baseline / 1024, 1),
        "rss_peak_open_mib": round(peak_kib / 1024, 1),
        "peak_open_streams": peak_open,
        "kib_per_open_stream": _round((peak_kib - baseline) / peak_open if peak_open else None),
        "server_threads_before": threads_before,
        "votes": len(vote_ms),
        "vote_p50_ms": _round(percentile(vote_ms, 50)),
        "vote_p95_ms": _round(percentile(vote_ms, 95)),
        "vote_max_ms": _round(max(vote_ms) if vote_ms else None),
    }


def _round(value):
    return None if value is None else round(value, 1)


# Setting up: the database, voters, arenas -----------------------------------------------------


def environment(args, database_url: str) -> dict:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "evalhub.settings",
        "DEBUG": "0",
        "SECRET_KEY": SECRET_KEY,
        "EVALHUB_SECRET_KEYS": "YmVuY2gtb25seS1ub3QtYS1zZWNyZXQtMDEyMzQ1Njc=",  # not a secret
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DATABASE_URL": database_url,
        "EVALHUB_CONN_MAX_AGE": "60",
        "CACHE_URL": f"{args.redis}/{args.cache_db}" if args.redis else "",
        "CELERY_BROKER_URL": f"{args.redis}/{args.broker_db}" if args.redis else "",
        "EVALHUB_SSL_REDIRECT": "0",
        "EVALHUB_OUTBOUND_ALLOW": "127.0.0.1",
        "EVALHUB_LOG_LEVEL": "WARNING",  # not a line per model request
    }


def empty_redis(args) -> None:
    if args.redis:
        import redis

        for db in (args.cache_db, args.broker_db):
            redis.Redis.from_url(f"{args.redis}/{db}").flushdb()


def queued_leaderboards(args) -> int | None:
    """The leaderboard computations waiting in the broker (no worker runs here)."""
    if not args.redis:
        return None
    import redis

    client = redis.Redis.from_url(f"{args.redis}/{args.broker_db}")
    return sum(b"compute_leaderboard" in message for message in client.lrange("analysis", 0, -1))


def build(args, model_port: int, voters: int) -> tuple[list[str], list[str]]:
    """`--systems` systems on the fake models, `--arenas` arenas entering all of them, and
    `voters` signed-in accounts (their session ids)."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    from arenas.models import Arena, ArenaSystem
    from endpoints.models import BotEndpoint
    from evalhub.models import System

    User = get_user_model()
    owner = User.objects.create(username="bench-arena-owner")
    systems = []
    for n in range(args.systems):
        system = System.objects.create(
            slug=f"bench-model-{n}", name=f"Bench model {n}", owner=owner
        )
        BotEndpoint.objects.create(
            system=system,
            protocol="openai",
            url=f"http://127.0.0.1:{model_port}/v1",
            model_name=f"bench-model-{n}",
            timeout_seconds=600,
            max_concurrency=64,
            daily_budget=1_000_000,
        )
        systems.append(system)
    slugs = []
    for n in range(args.arenas):
        arena = Arena.objects.create(
            owner=owner,
            slug=f"bench-arena-{n}",
            name=f"Bench arena {n}",
            visibility=Arena.Visibility.PUBLIC,
            voters=Arena.Voters.SIGNED_IN,
        )
        for system in systems:
            ArenaSystem.objects.create(arena=arena, system=system, endpoint=system.endpoint)
        slugs.append(arena.slug)
    users = User.objects.bulk_create(User(username=f"bench-voter-{n}") for n in range(voters))
    sessions = []
    for user in users:
        client = Client()
        client.force_login(user)
        sessions.append(client.cookies["sessionid"].value)
    return slugs, sessions


def stored_in_database(battles: list[Battle], tokens: int) -> dict:
    """How many answers were stored whole, and votes stored."""
    from arenas.models import Battle as StoredBattle
    from arenas.models import BattleAnswer

    ids = [b.url.rstrip("/").rsplit("/", 1)[1] for b in battles]
    answers = BattleAnswer.objects.filter(turn__battle__public_id__in=ids)
    done = answers.filter(status=BattleAnswer.Status.DONE, tokens=tokens).count()
    voted = StoredBattle.objects.filter(public_id__in=ids).exclude(vote="").count()
    return {"answers_stored_whole": done, "votes_stored": voted}


def warm_up(args, port, arenas, sessions) -> None:
    """A checked battle end to end: every token in order, the answers and the vote stored."""
    battles = [Battle(arenas[n % len(arenas)], session) for n, session in enumerate(sessions)]

    async def run():
        for n, battle in enumerate(battles):
            await start_battle(port, battle, f"Warm-up {n}.")
        rng = random.Random(1)
        await asyncio.gather(*(battle_life(port, b, rng, 120, True) for b in battles))

    asyncio.run(run())
    for battle in battles:
        for side, stream in battle.streams.items():
            assert stream.status == "done", (side, stream.status, stream.error)
            assert stream.tokens == list(range(args.tokens)), f"side {side}: tokens lost"
        assert battle.vote_ms is not None, battle.vote_error
    found = stored_in_database(battles, args.tokens)
    assert found == {"answers_stored_whole": 2 * len(battles), "votes_stored": len(battles)}, found


def measure_server(args, kind, env, arenas, sessions) -> dict:
    port = free_port()
    server = start_server(kind, env, port)
    try:
        warm_up(args, port, arenas, sessions[: args.warmup])
        voters = sessions[args.warmup : args.warmup + args.battles]
        battles = [Battle(arenas[n % len(arenas)], s) for n, s in enumerate(voters)]
        votes = kind == "asgi" or args.vote_threads
        figures = asyncio.run(run_phase(args, port, server.pid, battles, votes))
        return {**figures, **stored_in_database(battles, args.tokens)}
    finally:
        stop(server)


def arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--battles", type=int, default=500, help="battles (2 streams each)")
    parser.add_argument("--tokens", type=int, default=200, help="tokens of each answer")
    parser.add_argument("--rate", type=float, default=50.0, help="tokens per second")
    parser.add_argument("--systems", type=int, default=32, help="systems (64 streams each max)")
    parser.add_argument("--arenas", type=int, default=10, help="arenas the battles spread over")
    parser.add_argument("--warmup", type=int, default=2, help="checked warm-up battles")
    parser.add_argument("--start-concurrency", type=int, default=20, help="battles started at once")
    parser.add_argument("--timeout", type=float, default=900, help="seconds a stream may take")
    parser.add_argument(
        "--server", default="postgresql://postgres@127.0.0.1:5432/postgres", help="PostgreSQL"
    )
    parser.add_argument(
        "--database",
        choices=["auto", "postgres", "sqlite"],
        default="auto",
        help="auto: PostgreSQL when it has a free connection per stream, else SQLite",
    )
    parser.add_argument("--redis", default="redis://127.0.0.1:6379", help="'' for none")
    parser.add_argument("--cache-db", type=int, default=12)
    parser.add_argument("--broker-db", type=int, default=13)
    parser.add_argument("--skip-threads", action="store_true", help="no reference phase")
    parser.add_argument("--vote-threads", action="store_true", help="vote in the threads phase too")
    parser.add_argument("--smoke", action="store_true", help="a tiny run on SQLite: it runs")
    parser.add_argument("--label", default="")
    parser.add_argument("--serve-models", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.smoke:
        args.battles, args.tokens, args.rate, args.systems, args.arenas = 4, 10, 100.0, 4, 2
        args.redis = ""
    return args


def database(args):
    """A fresh PostgreSQL database's URL (context manager), or SQLite's with a note."""
    from contextlib import contextmanager

    import psycopg

    @contextmanager
    def sqlite():
        path = Path(f"/tmp/arena-bench-streams-{os.getpid()}.sqlite3")
        try:
            yield f"sqlite:///{path}"
        finally:
            path.unlink(missing_ok=True)

    if args.smoke or args.database == "sqlite":
        return sqlite()
    try:
        with psycopg.connect(args.server, connect_timeout=5) as admin:
            limit = int(admin.execute("SHOW max_connections").fetchone()[0])
            used = admin.execute("SELECT count(*) FROM pg_stat_activity").fetchone()[0]
    except psycopg.OperationalError as error:
        print(f"NOTE: PostgreSQL unreachable ({str(error).strip()}): running on SQLite")
        return sqlite()
    # Each server process streams with a few shared connections (endpoints/dbcalls.py),
    # plus one per request being answered (closed before its stream, under uvicorn); the
    # reference (gunicorn) holds one per thread.
    from endpoints.dbcalls import THREADS

    needed = 2 * (THREADS + args.start_concurrency) + 3 * 8 + 20
    if args.database == "auto" and limit - used < needed:
        print(
            f"NOTE: PostgreSQL has {limit - used} free connections (max_connections {limit}), "
            f"the arena needs about {needed}: running on "
            "SQLite (--database postgres runs on PostgreSQL anyway, to see the failures)"
        )
        return sqlite()
    os.environ["EVALHUB_BENCH_PG"] = args.server
    from pg import fresh_database

    return fresh_database("evalhub_bench_arena_streams")


def report(kind: str, f: dict, args) -> None:
    label = {"asgi": "ASGI (uvicorn, 2 workers)", "threads": "threads (gunicorn 3 x 8)"}[kind]
    print(
        f"{label}: {f['streams_done']}/{f['streams']} streams whole in {f['elapsed_seconds']} s "
        f"({f['streams_per_second']} streams/s, {f['tokens_per_second']} tokens/s); "
        f"errors: {f['errors'] or 'none'}"
    )
    print(
        f"  model chunk -> browser event: p50 {f['token_p50_ms']} / p95 {f['token_p95_ms']} / "
        f"p99 {f['token_p99_ms']} ms (max {f['token_max_ms']})"
    )
    print(
        f"  first byte p50 {f['first_byte_p50_ms']} / p95 {f['first_byte_p95_ms']} ms; first "
        f"token p50 {f['first_token_p50_ms']} / p95 {f['first_token_p95_ms']} ms; battle "
        f"starts {f['battle_start_seconds']} s (p95 {f['battle_start_p95_ms']} ms each)"
    )
    print(
        f"  memory: {f['rss_before_mib']} MiB before, {f['rss_peak_open_mib']} MiB with "
        f"{f['peak_open_streams']} streams open: {f['kib_per_open_stream']} KiB per stream; "
        f"server CPU {f['server_cpu_seconds']} s ({f['server_cpu_ms_per_token']} ms per token)"
    )
    print(
        f"  stored: {f['answers_stored_whole']} answers whole of {f['streams']}, "
        f"{f['votes_stored']} votes of {f['battles']} battles"
    )
    if f["votes"]:
        print(
            f"  votes: {f['votes']}, p50 {f['vote_p50_ms']} / p95 {f['vote_p95_ms']} ms "
            f"(max {f['vote_max_ms']})"
        )


def verdicts(asgi: dict) -> dict:
    def verdict(value, target):
        return None if value is None else value < target

    return {
        "token_p95_met": verdict(asgi["token_p95_ms"], TARGET_TOKEN_P95_MS),
        "memory_met": verdict(asgi["kib_per_open_stream"], TARGET_KB_PER_STREAM * 1000 / 1024),
        "vote_p95_met": verdict(asgi["vote_p95_ms"], TARGET_VOTE_P95_MS),
    }


def main() -> None:
    args = arguments()
    if args.serve_models:
        serve_models(args)
        return
    from harness import load_average, record

    load = load_average()
    with database(args) as database_url:
        env = environment(args, database_url)
        os.environ.update(env)
        import django

        django.setup()
        from django.core.management import call_command

        call_command("migrate", interactive=False, verbosity=0)
        empty_redis(args)
        models, model_port = start_models(args, env)
        try:
            voters = 2 * (args.warmup + args.battles)
            arenas, sessions = build(args, model_port, voters)
            from django.db import connections

            connections.close_all()
            kinds = ["asgi"] if args.skip_threads else ["asgi", "threads"]
            results, loads = {}, {}
            for n, kind in enumerate(kinds):
                half = sessions[n * (args.warmup + args.battles) :]
                loads[kind] = load_average()
                results[kind] = measure_server(args, kind, env, arenas, half)
                report(kind, results[kind], args)
            queued = queued_leaderboards(args)
            connections.close_all()
        finally:
            stop(models)
    empty_redis(args)
    end_load = load_average()
    print(
        f"leaderboard tasks queued in the broker: {queued} (arenas: {args.arenas}); "
        f"database: {database_url.split(':')[0]}"
    )
    print(f"load average: {load:.2f} at the start, {end_load:.2f} at the end")
    found = verdicts(results["asgi"])
    print(
        f"targets: token p95 < {TARGET_TOKEN_P95_MS:.0f} ms: {found['token_p95_met']}; "
        f"< {TARGET_KB_PER_STREAM:.0f} KB per stream: {found['memory_met']}; vote p95 < "
        f"{TARGET_VOTE_P95_MS:.0f} ms: {found['vote_p95_met']}"
    )
    if args.smoke:
        return
    record(
        "arena_streams",
        label=args.label,
        battles=args.battles,
        tokens=args.tokens,
        rate=args.rate,
        database=database_url.split(":")[0],
        load_at_start=round(load, 2),
        load_at_end=round(end_load, 2),
        phase_loads={k: round(v, 2) for k, v in loads.items()},
        leaderboards_queued=queued,
        **found,
        **{f"{kind}": figures for kind, figures in results.items()},
    )


if __name__ == "__main__":
    main()
