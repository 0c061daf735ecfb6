"""Serving crowdworkers (issue 15, benchmark 6): gunicorn on PostgreSQL, simulated workers
fetching batches and submitting judgments, on a 50,000-item and a 1,000-item A/B campaign.

Run from the repository root: ``.venv/bin/python bench/bench_serving.py [--help]``.

The production shape (docker-compose.yml): DEBUG=0, persistent database connections
(EVALHUB_CONN_MAX_AGE=60), the cache and sessions in Redis, gunicorn as the web service
runs it (``--gunicorn-workers``, ``--threads``), and background tasks (a finished batch
asks whether its campaign is complete) sent through Redis to a Celery worker process as
the ``worker-collection`` service runs it; its CPU is counted with the server's. With
``--eager`` the tasks run inside the request, as in the embedded mode (``make run``). The script creates and drops its own
database (``evalhub_bench_serving`` unless told otherwise) and collects the static files
once (DEBUG=0 serves them from the manifest).

A simulated crowdworker is a logged-in account with its own browser: HTTP/1.1 on a plain
socket (the load generator shares the machine's cores with the server; ``http.client``
costs several times more CPU per request, ``requests`` more again), a fresh connection per
request, its cookies. It opens the campaign's start link (a *batch fetch*: the start link
and its redirect to the first item), submits every item and starts again. A *judgment* is
what a browser does to answer an item and see the next one, timed as a whole: with the
task page's script, as browsers run it, one POST answered with the next item in place
(annotation/views/in_place.py); with ``--no-script``, a plain form post and its redirect
to the next item.

Two measurements, because they answer different questions:

1. Saturation (closed loop): ``--clients`` workers, each submitting as soon as its last
   answer arrived. This gives the most judgments per second the server sustains, and the
   *cost* of a judgment: the bare login page (``GET /accounts/login/``, no database, no
   session) under the same clients, with the same client code, in the same run, divided
   by judgments per second: how many bare requests one judgment is worth. Its latencies
   say little: with N clients and no think time, Little's law fixes the mean latency at
   N / throughput.
2. Steady load (open model): judgments due at a fixed ``--rate`` for ``--rate-seconds``,
   as real crowdworkers, who read and think between items, submit: a slow answer does not
   slow the next arrivals down. Each judgment's latency runs from when it was due, not from
   when a sender got to it, so time queued behind slow answers counts (no coordinated
   omission). The crowdworkers start at staggered points of their batches (``stagger``;
   ``--aligned``: all at item 1, in step, the worst case). A run that cannot keep up is
   reported as having fallen behind (its last answer came more than 2% of the run after
   the last judgment was due).

Before timing, a warm-up on each campaign checks the result: every acknowledged submit
stored exactly once (0 lost, 0 duplicated); every timed phase is checked the same way.
The saturation minute is cut into rounds (3 by default) that interleave the bare page and
the campaigns, so that load from elsewhere on the machine falls on all of them alike; its
figures are the medians over the rounds.
"""

import argparse
import logging
import os
import queue
import re
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlencode, urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

FORM = re.compile(r'<form method="post" action="(/work/assignment/[^"]+/items/(\d+)/)"')
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
POSITION = re.compile(r"Item (\d+) of (\d+)<")
SECRET_KEY = "bench-serving-not-a-secret-0123456789-abcdefghijklmnopqrstuvwxyz"
BENCH_APPLICATION = "bench_serving"  # this script's database connections, not gunicorn's


def arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60, help="saturation run per campaign")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved saturation rounds")
    parser.add_argument("--warmup", type=float, default=5, help="checked warm-up per campaign")
    parser.add_argument("--clients", type=int, default=32, help="saturation: closed-loop workers")
    parser.add_argument(
        "--rate", type=float, default=200, help="steady load: judgments/s (0: none)"
    )
    parser.add_argument("--rate-seconds", type=float, default=60, help="steady load per campaign")
    parser.add_argument("--sessions", type=int, default=64, help="steady load: crowdworkers")
    parser.add_argument("--senders", type=int, default=64, help="steady load: client threads")
    parser.add_argument(
        "--aligned",
        action="store_true",
        help="steady load: all crowdworkers start their batches together and stay in step "
        "(a worst case: their batch ends arrive at once); default: staggered",
    )
    parser.add_argument("--gunicorn-workers", type=int, default=4)
    parser.add_argument("--threads", type=int, default=1, help="gunicorn threads per worker")
    parser.add_argument("--sizes", default="50000,1000", help="campaign sizes, in items")
    parser.add_argument("--database", default="evalhub_bench_serving")
    parser.add_argument("--server", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--cache", default="redis://127.0.0.1:6379/7")
    parser.add_argument("--keep-db", action="store_true", help="do not drop the database")
    parser.add_argument(
        "--no-script",
        action="store_true",
        help="browsers without the task page's script: each judgment a post and a redirect",
    )
    add_celery_arguments(parser)
    parser.add_argument("--label", default="", help="recorded with the figures")
    return parser.parse_args()


def add_celery_arguments(parser) -> None:
    parser.add_argument(
        "--broker", default="redis://127.0.0.1:6379/8", help="Celery's broker (emptied)"
    )
    parser.add_argument(
        "--eager", action="store_true", help="no broker: tasks run inside the request"
    )


def environment(args) -> dict:
    return {
        **os.environ,
        "DEBUG": "0",
        "SECRET_KEY": SECRET_KEY,
        "EVALHUB_SECRET_KEYS": "YmVuY2gtb25seS1ub3QtYS1zZWNyZXQtMDEyMzQ1Njc=",  # a Fernet key, not a secret
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DATABASE_URL": f"{args.server}/{args.database}",
        "EVALHUB_CONN_MAX_AGE": "60",
        "CACHE_URL": args.cache,
        "EVALHUB_SSL_REDIRECT": "0",
        "CELERY_BROKER_URL": "" if args.eager else args.broker,
    }


def empty_broker(args) -> None:
    """Drop what an earlier run left queued (the broker's database is the benchmark's)."""
    if not args.eager:
        import redis

        redis.Redis.from_url(args.broker).flushdb()


def start_celery_worker(env) -> subprocess.Popen:
    """A Celery worker process as docker-compose.yml's worker-collection runs it."""
    command = [sys.executable, "-m", "celery", "-A", "evalhub", "worker", "--loglevel=WARNING"]
    command += ["--queues=collection,celery", "--pool=threads", "--concurrency=4"]
    command += ["-n", f"bench-serving-{os.getpid()}@%h"]
    worker = subprocess.Popen(command, cwd=ROOT, env=env)
    from evalhub.celery import app

    for _ in range(60):
        if worker.poll() is not None:
            raise SystemExit("the Celery worker exited before answering")
        if app.control.ping(timeout=0.5):
            return worker
    worker.terminate()
    raise SystemExit("the Celery worker did not answer within 30 s")


def psql(args, sql: str) -> None:
    subprocess.run(
        ["psql", f"{args.server}/postgres", "-q", "-c", sql], check=True, capture_output=True
    )


def prepare(args, env) -> None:
    psql(args, f"DROP DATABASE IF EXISTS {args.database}")
    psql(args, f"CREATE DATABASE {args.database}")
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
    subprocess.run(
        [*manage, "collectstatic", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True
    )


def build_campaign(slug: str, n_items: int, clients: int):
    """A live A/B campaign of `n_items` in batches of 20, and `clients` logged-in accounts
    (their session ids). The small campaign asks more judgments per item so that it does not
    run out of work during the timed run."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    from annotation.items import add_items
    from annotation.kinds.base import ItemSpec
    from annotation.models import Campaign

    redundancy = 3 if n_items >= 20000 else 50
    c = Campaign.objects.create(
        slug=slug,
        title=f"Bench {n_items}",
        task_kind="ab",
        status="live",
        batch_size=20,
        redundancy=redundancy,
        max_batches_per_worker=1000,
    )
    specs = [
        ItemSpec(
            content={
                "context": [f"context {i} ?"],
                "left": f"left answer {i}",
                "right": f"right answer {i}",
                "left_is": "a" if i % 2 else "b",
                "meta": {"prompt": str(i), "system_a": "sys-a", "system_b": "sys-b"},
            }
        )
        for i in range(n_items)
    ]
    add_items(c, specs)
    users = get_user_model().objects.bulk_create(
        get_user_model()(username=f"{slug}-w{n}") for n in range(clients)
    )
    sessions = []
    for user in users:
        client = Client()
        client.force_login(user)
        sessions.append(client.cookies["sessionid"].value)
    return c, sessions


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_gunicorn(args, env, port: int) -> subprocess.Popen:
    command = [sys.executable, "-m", "gunicorn", "evalhub.wsgi", "--bind", f"127.0.0.1:{port}"]
    command += ["--workers", str(args.gunicorn_workers), "--threads", str(args.threads)]
    command += ["--timeout", "120", "--log-level", "warning"]
    server = subprocess.Popen(command, cwd=ROOT, env=env)
    for _ in range(150):
        try:
            Browser(port).get("/accounts/login/")
            return server
        except OSError:
            if server.poll() is not None:
                raise SystemExit("gunicorn exited before answering") from None
            time.sleep(0.2)
    server.terminate()
    raise SystemExit("gunicorn did not answer within 30 s")


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) of a process and its children still running: gunicorn's
    master and workers. Clock ticks from /proc (Linux); 0 elsewhere."""
    total = 0.0
    try:
        tasks = Path(f"/proc/{pid}/task")
        children = [int(c) for t in tasks.iterdir() for c in (t / "children").read_text().split()]
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return total
    return total + sum(cpu_seconds(child) for child in children)


class Failed(Exception):
    """A response the simulated browser did not expect."""


class Headers:
    """A response's headers by case-insensitive name."""

    def __init__(self, lines: list[bytes]):
        self.values: dict[str, list[str]] = {}
        for line in lines:
            name, _, value = line.decode("latin-1").partition(":")
            self.values.setdefault(name.strip().lower(), []).append(value.strip())

    def __getitem__(self, name: str) -> str:
        return self.values[name.lower()][0]

    def get_all(self, name: str) -> list[str]:
        return self.values.get(name.lower(), [])


def http_request(port: int, method: str, path: str, headers: dict, body: bytes | None):
    """One HTTP/1.1 exchange on a fresh connection (``Connection: close``): (status,
    headers, body). A plain socket: http.client parses headers with the email package,
    several times the CPU, and the load generator shares the server's two cores."""
    body = body or b""
    lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    if body or method == "POST":
        lines.append(f"Content-Length: {len(body)}")
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    head, _, content = b"".join(chunks).partition(b"\r\n\r\n")
    status_line, *header_lines = head.split(b"\r\n")
    parsed = Headers(header_lines)
    if "chunked" in parsed.get_all("Transfer-Encoding"):
        content = dechunked(content)
    return int(status_line.split()[1]), parsed, content


def dechunked(content: bytes) -> bytes:
    out, rest = [], content
    while True:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            return b"".join(out)
        out.append(rest[:size])
        rest = rest[size + 2 :]


class Browser:
    """One simulated browser on plain HTTP/1.1 over a socket of its own (see
    http_request: a fraction of the CPU of http.client, itself a fraction of `requests`').

    Each request takes a fresh connection (``Connection: close``): gunicorn's sync workers
    do not keep connections alive, and a reused connection the server closed while idle
    would fail a POST. Cookies are kept by name whatever their flags: DEBUG=0 marks them
    Secure, and this plain-HTTP client must still send them back."""

    def __init__(self, port: int, session_id: str | None = None, script: bool = True):
        self.port = port
        self.cookies = {"sessionid": session_id} if session_id else {}
        self.script = script

    def request(self, method: str, path: str, body: bytes | None = None, headers=None):
        sent = dict(headers or {})
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        status, answer, content = http_request(self.port, method, path, sent, body)
        for cookie in answer.get_all("Set-Cookie"):
            name, _, rest = cookie.partition("=")
            self.cookies[name.strip()] = rest.split(";", 1)[0]
        return status, answer, content.decode()

    def get(self, path: str) -> tuple[int, str, str]:
        """(status, path, page) after following redirects."""
        for _ in range(5):
            status, headers, page = self.request("GET", path)
            if status not in (301, 302, 303):
                return status, path, page
            path = urlsplit(headers["Location"]).path
        raise Failed(f"too many redirects from {path}")

    def submit(self, path: str, page: str) -> tuple[str, str]:
        """Answer the item on `page` as the page's script does (or, without the script, as
        a plain form post, following its redirect): the next page and its path."""
        form, token = FORM.search(page), CSRF.search(page)
        if form is None or token is None:
            raise Failed(f"no form on {path}: {page[:200]}")
        body = urlencode(
            {"csrfmiddlewaretoken": token.group(1), "choice": "left", "client_ms": "900"}
        ).encode()
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "Referer": f"http://127.0.0.1:{self.port}{path}",
        }
        if self.script:
            headers["X-EvalHub-In-Place"] = "1"
        status, answer, text = self.request("POST", form.group(1), body, headers)
        if self.script and status == 200:
            return urlsplit(answer["X-EvalHub-Location"]).path, text  # the next item, in place
        if self.script and status == 204:
            target = answer["X-EvalHub-Redirect"]  # the batch is done: the script navigates
        elif not self.script and status == 302:
            target = answer["Location"]
        else:
            raise Failed(f"submit: {status} {form.group(1)} {text[:200]}")
        status, path, page = self.get(urlsplit(target).path)
        if status != 200:
            raise Failed(f"after submit: {status} {path} {page[:200]}")
        return path, page


class Crowdworker:
    """A logged-in account working in one campaign: its browser and the page in front of
    it."""

    def __init__(self, port: int, slug: str, session_id: str, script: bool):
        self.browser = Browser(port, session_id, script)
        self.slug = slug
        self.path = self.page = None

    def ready(self) -> float | None:
        """Make sure an item is in front of the worker, fetching a batch (start link, first
        item) when none is; the seconds a fetch took, or None."""
        if self.page is not None and FORM.search(self.page):
            return None
        if self.path is not None and not self.path.endswith("/done/"):
            raise Failed(f"no form: {self.path} {self.page[:200]}")
        t = time.perf_counter()
        status, self.path, self.page = self.browser.get(f"/work/{self.slug}/")
        if status != 200 or not FORM.search(self.page):
            raise Failed(f"batch fetch: {status} {self.path} {self.page[:200]}")
        return time.perf_counter() - t

    def judge(self) -> bool:
        """Answer the item in front of the worker; True if that finished the batch."""
        self.path, self.page = self.browser.submit(self.path, self.page)
        return self.path.endswith("/done/")

    def position(self) -> tuple[int, int]:
        """(item, batch size) of the item in front of the worker."""
        found = POSITION.search(self.page or "")
        if found is None:
            raise Failed(f"no position on {self.path}")
        return int(found.group(1)), int(found.group(2))


class Run:
    """What all clients of one timed phase saw."""

    def __init__(self, deadline: float):
        self.deadline = deadline
        self.lock = threading.Lock()
        self.latencies: list[float] = []  # judgments: answer posted, next page in hand
        self.last_latencies: list[float] = []  # those of them that finished a batch
        self.batch_latencies: list[float] = []  # start link + first item
        self.acknowledged = 0
        self.errors: list[str] = []
        self.last_done = 0.0

    def add(self, latency=None, batch_latency=None, error=None, last=False):
        with self.lock:
            if latency is not None:
                self.latencies.append(latency)
                if last:
                    self.last_latencies.append(latency)
                self.acknowledged += 1
                self.last_done = time.monotonic()
            if batch_latency is not None:
                self.batch_latencies.append(batch_latency)
            if error:
                self.errors.append(error)


def closed_loop(worker: Crowdworker, run: Run) -> None:
    """Judge until the deadline, each judgment right after the last (no think time); the
    batch in hand is left unfinished (it stays started)."""
    try:
        while time.monotonic() < run.deadline:
            fetch = worker.ready()
            if fetch is not None:
                run.add(batch_latency=fetch)
            t = time.perf_counter()
            worker.judge()
            run.add(latency=time.perf_counter() - t)
    except (Failed, OSError) as error:
        run.add(error=str(error))


def bare(browser: Browser, run: Run) -> None:
    try:
        while time.monotonic() < run.deadline:
            t = time.perf_counter()
            status, _, _ = browser.request("GET", "/accounts/login/")
            if status != 200:
                raise Failed(f"bare: {status}")
            run.add(latency=time.perf_counter() - t)
    except (Failed, OSError) as error:
        run.add(error=str(error))


def database_backends() -> list[int]:
    """The PostgreSQL backends serving gunicorn: client connections to this database
    other than this script's own (its main thread's, which checks the results, and the
    sampler's). Autovacuum is not counted."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND backend_type = 'client backend' AND pid <> pg_backend_pid() "
            "AND application_name <> %s",
            [BENCH_APPLICATION],
        )
        return [pid for (pid,) in cursor.fetchall()]


class CPU:
    """CPU seconds the server (gunicorn, and the Celery worker of its background tasks),
    its database backends (PostgreSQL on this machine) and this load generator spent during
    a phase.

    Backends come and go (EVALHUB_CONN_MAX_AGE=60 replaces a connection after a minute),
    so a thread samples them every half second: a backend that closes loses at most its
    last half second, one that opens counts from 0."""

    server_pids: tuple[int, ...] = ()

    def __enter__(self):
        self.seen: dict[int, tuple[float, float]] = {}  # pid: (first, last) CPU seconds
        self.sample(initial=True)
        self.stop = threading.Event()
        self.sampler = threading.Thread(target=self.sample_until_stopped)
        self.sampler.start()
        self.server, self.client = self.server_seconds(), time.process_time()
        return self

    def server_seconds(self) -> float:
        return sum(cpu_seconds(pid) for pid in self.server_pids)

    def sample(self, initial=False):
        for pid in database_backends():
            cpu = cpu_seconds(pid)  # 0 if it has just gone
            first, last = self.seen.get(pid, (cpu if initial else 0.0, 0.0))
            self.seen[pid] = (first, max(last, cpu))

    def sample_until_stopped(self):
        from django.db import connection

        try:
            while not self.stop.wait(0.5):
                self.sample()
        finally:
            connection.close()

    def __exit__(self, *exc):
        self.server = self.server_seconds() - self.server
        self.client = time.process_time() - self.client
        self.stop.set()
        self.sampler.join()
        self.sample()
        self.database = sum(last - first for first, last in self.seen.values())


def phase(target, clients, seconds: float) -> tuple[Run, float]:
    run = Run(time.monotonic() + seconds)
    threads = [threading.Thread(target=target, args=(c, run)) for c in clients]
    started = time.monotonic()
    with CPU() as run.cpu:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    elapsed = time.monotonic() - started
    if run.errors:
        raise SystemExit(f"{len(run.errors)} errors, first: {run.errors[0]}")
    return run, elapsed


def fixed_rate(workers: list[Crowdworker], rate: float, seconds: float, senders: int):
    """Judgments arriving at `rate` per second (an open model: crowdworkers who read and
    think between items, so a slow answer does not slow the arrivals down). Judgment k is
    due at start + k / rate; its latency runs from then, not from when a sender got to it,
    so time spent queued behind slow answers counts (no coordinated omission). A judgment
    goes to an idle worker; a worker whose batch is done fetches the next one before it is
    idle again (timed apart, as batch fetches). Returns the run and the seconds from the
    first due time to the last answer: if the server cannot keep up, the judgments pile up,
    latencies grow and that time stretches beyond `seconds`. Judgments not sent 10% of the
    run after it should have ended are dropped (the run is then reported as behind)."""
    idle: queue.SimpleQueue[Crowdworker] = queue.SimpleQueue()
    for worker in workers:
        idle.put(worker)
    total = int(rate * seconds)
    tickets = iter(range(total))
    lock = threading.Lock()
    t0 = time.monotonic() + 0.5
    run = Run(t0 + seconds)
    give_up = t0 + seconds * 1.1

    def sender():
        try:
            while True:
                with lock:
                    k = next(tickets, None)
                if k is None:
                    return
                due = t0 + k / rate
                if (wait := due - time.monotonic()) > 0:
                    time.sleep(wait)
                worker = idle.get()
                if time.monotonic() > give_up:
                    idle.put(worker)
                    return  # behind by more than a tenth of the run: the rest is not sent
                try:
                    last = worker.judge()
                    run.add(latency=time.monotonic() - due, last=last)
                    fetch = worker.ready()
                    if fetch is not None:
                        run.add(batch_latency=fetch)
                finally:
                    idle.put(worker)
        except (Failed, OSError) as error:
            run.add(error=str(error))

    threads = [threading.Thread(target=sender) for _ in range(senders)]
    with CPU() as run.cpu:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    if run.errors:
        raise SystemExit(f"{len(run.errors)} errors, first: {run.errors[0]}")
    return run, run.last_done - t0


def stored(campaign) -> dict:
    """Judgments stored, and duplicates by (assignment, item) and by (worker, item)."""
    from django.db.models import Count

    from annotation.models import Judgment

    judgments = Judgment.objects.filter(campaign=campaign)
    twice = judgments.values("assignment", "item").annotate(n=Count("pk")).filter(n__gt=1)
    worker_twice = judgments.values("worker", "item").annotate(n=Count("pk")).filter(n__gt=1)
    return {
        "stored": judgments.count(),
        "duplicated": twice.count() + worker_twice.count(),
    }


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if values else 0.0


def figures(run: Run, elapsed: float) -> dict:
    ms = [v * 1000 for v in run.latencies]
    return {
        "per_second": round(run.acknowledged / elapsed, 1),
        "count": run.acknowledged,
        "p50_ms": round(statistics.median(ms), 1),
        "p95_ms": round(percentile(ms, 95), 1),
        "p99_ms": round(percentile(ms, 99), 1),
        # Per judgment (or bare request): what it cost the server (gunicorn and Celery),
        # PostgreSQL and the load generator.
        "server_cpu_ms": round(run.cpu.server * 1000 / run.acknowledged, 2),
        "database_cpu_ms": round(run.cpu.database * 1000 / run.acknowledged, 2),
        "client_cpu_ms": round(run.cpu.client * 1000 / run.acknowledged, 2),
    }


def checked(before: int, run: Run, campaign) -> int:
    """The judgments stored now, after asserting that each acknowledged submit was stored
    once: 0 lost, 0 duplicated."""
    check = stored(campaign)
    lost = before + run.acknowledged - check["stored"]
    assert lost == 0 and check["duplicated"] == 0, (before, run.acknowledged, check)
    return check["stored"]


def with_batches(result: dict, run: Run) -> dict:
    batch_ms = [v * 1000 for v in run.batch_latencies]
    result["batch_p50_ms"] = round(statistics.median(batch_ms), 1) if batch_ms else None
    return result


def saturate(campaign, workers, seconds, before: int) -> tuple[dict, int]:
    run, elapsed = phase(closed_loop, workers, seconds)
    now = checked(before, run, campaign)
    return with_batches(figures(run, elapsed), run), now


def stagger(workers: list[Crowdworker]) -> int:
    """Bring worker i to item 1 + i * size // len(workers) of a batch, with untimed
    judgments (one thread per worker); returns how many were made.

    Crowdworkers reach the end of their batches at different times, as people who arrive
    and read at their own pace do. Workers that all start at item 1 and take judgments in
    turn (the idle queue is first in, first out) stay in step: each one's batch ends within
    the same third of a second, every 6.4 s at 64 workers and 200/s, and their 64 done
    pages and batch fetches (a fifth of a second of CPU each batch fetch) arrive at once.
    ``--aligned`` keeps them in step, as a worst case."""
    made = [0] * len(workers)

    def bring(i: int, worker: Crowdworker) -> None:
        worker.ready()
        position, size = worker.position()
        target = 1 + i * size // len(workers)
        for _ in range((target - position) % size):
            worker.judge()
            worker.ready()
            made[i] += 1

    threads = [threading.Thread(target=bring, args=(i, w)) for i, w in enumerate(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(made)


def at_rate(args, campaign, workers, before: int) -> tuple[dict, int]:
    if args.aligned:
        for worker in workers:
            worker.ready()  # a batch in hand: the timed judgments are judgments only
    else:
        before = checked(before + stagger(workers), Run(0.0), campaign)
    run, elapsed = fixed_rate(workers, args.rate, args.rate_seconds, args.senders)
    now = checked(before, run, campaign)
    result = with_batches(figures(run, elapsed), run)
    # The judgments that finished a batch: an answer, then the done page.
    last_ms = [v * 1000 for v in run.last_latencies]
    result["batch_last_p50_ms"] = round(statistics.median(last_ms), 1) if last_ms else None
    result["batch_last_p95_ms"] = round(percentile(last_ms, 95), 1) if last_ms else None
    result["due"] = int(args.rate * args.rate_seconds)
    # Behind: the last answer came more than 2% of the run after the last judgment was due.
    result["kept_up"] = int(
        run.acknowledged == result["due"] and elapsed <= args.rate_seconds * 1.02
    )
    return result, now


def medians(rounds: list[dict]) -> dict:
    """Each figure's median over the rounds that have it (a short round may fetch no batch)."""
    result = {}
    for key in rounds[0]:
        values = [r[key] for r in rounds if r[key] is not None]
        result[key] = round(statistics.median(values), 2) if values else None
    return result


def setup_django(args) -> dict:
    """The benchmark's environment in this process too, the database migrated, Django set
    up; returns the environment (for the server processes)."""
    env = environment(args)
    os.environ.update(env)
    prepare(args, env)
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalhub.settings")
    django.setup()
    logging.getLogger("axes").setLevel(logging.WARNING)  # one line per account logged in
    logging.getLogger("celery").setLevel(logging.WARNING)  # one line per eager task
    return env


def main():
    args = arguments()
    env = setup_django(args)
    from django.db import connections

    options = connections["default"].settings_dict.setdefault("OPTIONS", {})
    options["application_name"] = BENCH_APPLICATION
    from harness import record

    sizes = [int(s) for s in args.sizes.split(",")]
    accounts = max(args.clients, args.sessions)
    t = time.perf_counter()
    campaigns = {n: build_campaign(f"bench-{n}", n, accounts) for n in sizes}
    with connections["default"].cursor() as cursor:
        # What autovacuum would have done by the time a campaign of this size goes live
        # (it vacuums after bulk inserts too). The judgment table is still empty here: it
        # is analyzed again after the warm-up.
        cursor.execute("VACUUM ANALYZE")
    print(f"built campaigns {sizes} in {time.perf_counter() - t:.0f} s")
    connections.close_all()

    empty_broker(args)
    celery = None if args.eager else start_celery_worker(env)
    port = free_port()
    server = start_gunicorn(args, env, port)
    CPU.server_pids = (server.pid,) if celery is None else (server.pid, celery.pid)
    load = os.getloadavg()
    slice_ = args.seconds / args.rounds
    rounds = {"bare": [], **{n: [] for n in sizes}}
    steady = {}
    workers = {
        n: [Crowdworker(port, campaign.slug, s, not args.no_script) for s in sessions]
        for n, (campaign, sessions) in campaigns.items()
    }
    anonymous = [Browser(port) for _ in range(args.clients)]
    try:
        # Warm-up: every page is compiled, and the result is checked before any timing.
        phase(bare, anonymous, args.warmup)
        stored_now = {}
        for n, (campaign, _) in campaigns.items():
            warm, _ = phase(closed_loop, workers[n][: args.clients], args.warmup)
            stored_now[n] = checked(0, warm, campaign)
        with connections["default"].cursor() as cursor:
            # The judgment table was analyzed empty; a platform that has served campaigns
            # has statistics of its judgments (autoanalyze would see them within a minute).
            cursor.execute("ANALYZE annotation_judgment")
        # Saturation: as many judgments as the clients can get answered. Rounds interleave
        # the reference and the campaigns, so that a burst of load from elsewhere on the
        # machine falls on all of them alike; each figure is the median.
        for r in range(args.rounds):
            bare_run, bare_elapsed = phase(bare, anonymous, slice_)
            rounds["bare"].append(figures(bare_run, bare_elapsed))
            for n, (campaign, _) in campaigns.items():
                result, stored_now[n] = saturate(
                    campaign, workers[n][: args.clients], slice_, stored_now[n]
                )
                result["cost_in_bare_requests"] = round(
                    rounds["bare"][-1]["per_second"] / result["per_second"], 2
                )
                result["server_cpu_in_bare_requests"] = round(
                    result["server_cpu_ms"] / rounds["bare"][-1]["server_cpu_ms"], 2
                )
                rounds[n].append(result)
            print(
                f"round {r + 1}/{args.rounds}: "
                + ", ".join(
                    f"{k}: {v[-1]['per_second']}/s p95 {v[-1]['p95_ms']} ms"
                    for k, v in rounds.items()
                )
            )
        # Steady load: judgments due at a fixed rate, latency from when each was due.
        if args.rate:
            for n, (campaign, _) in campaigns.items():
                steady[n], stored_now[n] = at_rate(
                    args, campaign, workers[n][: args.sessions], stored_now[n]
                )
                print(f"{n} items at {args.rate:g}/s: {steady[n]}")
    finally:
        for process in (server, celery):
            if process is not None:
                process.terminate()
                process.wait(timeout=30)
        empty_broker(args)
        connections.close_all()
        if not args.keep_db:
            psql(args, f"DROP DATABASE IF EXISTS {args.database}")

    reference = medians(rounds["bare"])
    results = {n: medians(rounds[n]) for n in sizes}
    gunicorn = f"{args.gunicorn_workers} workers x {args.threads} threads"
    tasks = "inside the request (--eager)" if args.eager else "in a Celery worker process"
    judgment = (
        "a plain form post and its redirect (--no-script)"
        if args.no_script
        else "one post answered in place (the task page's script)"
    )
    print(f"a judgment: {judgment}; background tasks {tasks}")
    print(
        f"saturation (closed loop, {args.clients} clients, no think time), medians of "
        f"{args.rounds} rounds, {args.seconds:.0f} s each; gunicorn {gunicorn}"
    )
    print(
        f"  bare GET /accounts/login/: {reference['per_second']} req/s, "
        f"p50 {reference['p50_ms']} ms, p95 {reference['p95_ms']} ms, "
        f"server CPU {reference['server_cpu_ms']} ms, client CPU {reference['client_cpu_ms']} ms"
    )
    for n, r in results.items():
        print(
            f"  {n:>6} items: {r['per_second']} judgments/s, "
            f"judgment p50 {r['p50_ms']} ms, p95 {r['p95_ms']} ms, p99 {r['p99_ms']} ms, "
            f"batch fetch p50 {r['batch_p50_ms']} ms; "
            f"one judgment = {r['cost_in_bare_requests']} bare requests "
            f"(server CPU {r['server_cpu_ms']} ms = {r['server_cpu_in_bare_requests']} bare; "
            f"PostgreSQL CPU {r['database_cpu_ms']} ms; client CPU {r['client_cpu_ms']} ms)"
        )
    if steady:
        print(
            f"steady load (open model: {args.rate:g} judgments/s due for {args.rate_seconds:.0f} s, "
            f"{args.sessions} crowdworkers "
            f"{'in step (--aligned)' if args.aligned else 'at staggered points of their batches'}, "
            "latency from the due time)"
        )
        for n, r in steady.items():
            verdict = "kept up" if r["kept_up"] else "FELL BEHIND"
            print(
                f"  {n:>6} items: {r['count']} of {r['due']} due judgments answered, "
                f"{r['per_second']} judgments/s ({verdict}), "
                f"p50 {r['p50_ms']} ms, p95 {r['p95_ms']} ms, p99 {r['p99_ms']} ms; "
                f"a batch's last judgment (answer + done page) p50 {r['batch_last_p50_ms']} ms, "
                f"p95 {r['batch_last_p95_ms']} ms; batch fetch p50 {r['batch_p50_ms']} ms"
            )
    print("0 lost, 0 duplicated judgments (checked after every phase)")
    if len(sizes) == 2:
        small, large = (n for n in sorted(sizes))
        line = (
            f"{large} vs {small} items: saturation throughput x"
            f"{results[large]['per_second'] / results[small]['per_second']:.2f}, "
            f"cost x{results[large]['cost_in_bare_requests'] / results[small]['cost_in_bare_requests']:.2f}"
        )
        if steady:
            line += f", steady p95 x{steady[large]['p95_ms'] / steady[small]['p95_ms']:.2f}"
        print(line)
    after = os.getloadavg()
    print(f"load average: {load[0]:.2f} at start, {after[0]:.2f} at end, on {os.cpu_count()} CPUs")
    record(
        "serving",
        label=args.label,
        client="socket",
        judgment="form post + redirect" if args.no_script else "in place",
        tasks="eager" if args.eager else "celery worker",
        clients=args.clients,
        seconds=args.seconds,
        rounds=args.rounds,
        gunicorn=gunicorn,
        load_average=[round(load[0], 2), round(after[0], 2)],
        bare=reference,
        campaigns={str(n): results[n] for n in sizes},
        steady={
            "rate": args.rate,
            "seconds": args.rate_seconds,
            "sessions": args.sessions,
            "crowdworkers": "aligned" if args.aligned else "staggered",
            "campaigns": {str(n): r for n, r in steady.items()},
        }
        if steady
        else None,
        lost=0,
        duplicated=0,
    )


if __name__ == "__main__":
    main()
