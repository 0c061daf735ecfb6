"""Serving crowdworkers (issue 15, benchmark 6): gunicorn on PostgreSQL, simulated workers
fetching batches and submitting judgments, on a 50,000-item and a 1,000-item A/B campaign.

Run from the repository root: ``.venv/bin/python bench/bench_serving.py [--help]``.

The production shape (docker-compose.yml): DEBUG=0, persistent database connections
(EVALHUB_CONN_MAX_AGE=60), the cache in Redis, gunicorn sync workers (4, as the issue
measured). The script creates and drops its own database (``evalhub_bench_serving`` unless
told otherwise) and collects the static files once (DEBUG=0 serves them from the manifest).

Each simulated worker is a logged-in account with its own ``requests`` session; each request
takes a fresh connection (``Connection: close``): gunicorn's sync workers do not keep
connections alive, and a reused connection the server closed while idle would fail a POST.
A worker opens the campaign's start link, fetches its batch, submits every item (the POST
and its redirect to the next item are one *judgment*, timed together) and starts again.

Reference, in the same run and setting: the bare login page (``GET /accounts/login/``) under
the same number of clients. A judgment's cost is the bare page's requests per second divided
by judgments per second: how many bare requests one judgment is worth.

Before timing, a warm-up on each campaign checks the result: every acknowledged submit
stored exactly once (0 lost, 0 duplicated); every timed slice is checked the same way.
The timed run is cut into rounds (3 by default) that interleave the bare page and the
campaigns, so that load from elsewhere on the machine falls on all of them alike; the
figures printed and recorded are the medians over the rounds.
"""

import argparse
import logging
import os
import re
import socket
import statistics
import subprocess
import sys
import threading
import time
from http.cookiejar import DefaultCookiePolicy
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

FORM = re.compile(r'<form method="post" action="(/work/assignment/[^"]+/items/(\d+)/)"')
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
# DEBUG=0 marks cookies Secure, and this plain-HTTP client must still send them back: requests
# builds a fresh cookie jar (default policy) for every request and redirect, so the policy is
# changed for the whole process.
DefaultCookiePolicy.return_ok_secure = lambda self, cookie, request: True
SECRET_KEY = "bench-serving-not-a-secret-0123456789-abcdefghijklmnopqrstuvwxyz"


def arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60, help="timed run per campaign")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds")
    parser.add_argument("--warmup", type=float, default=5, help="checked warm-up per campaign")
    parser.add_argument("--clients", type=int, default=32, help="simulated workers")
    parser.add_argument("--gunicorn-workers", type=int, default=4)
    parser.add_argument("--threads", type=int, default=1, help="gunicorn threads per worker")
    parser.add_argument("--sizes", default="50000,1000", help="campaign sizes, in items")
    parser.add_argument("--database", default="evalhub_bench_serving")
    parser.add_argument("--server", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--cache", default="redis://127.0.0.1:6379/7")
    parser.add_argument("--keep-db", action="store_true", help="do not drop the database")
    parser.add_argument("--label", default="", help="recorded with the figures")
    return parser.parse_args()


def environment(args) -> dict:
    return {
        **os.environ,
        "DEBUG": "0",
        "SECRET_KEY": SECRET_KEY,
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DATABASE_URL": f"{args.server}/{args.database}",
        "EVALHUB_CONN_MAX_AGE": "60",
        "CACHE_URL": args.cache,
        "EVALHUB_SSL_REDIRECT": "0",
    }


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

    from annotation.kinds.base import ItemSpec
    from annotation.models import Campaign
    from annotation.services import add_items

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
            requests.get(f"http://127.0.0.1:{port}/accounts/login/", timeout=5)
            return server
        except requests.RequestException:
            if server.poll() is not None:
                raise SystemExit("gunicorn exited before answering") from None
            time.sleep(0.2)
    server.terminate()
    raise SystemExit("gunicorn did not answer within 30 s")


def session(session_id: str | None) -> requests.Session:
    http = requests.Session()
    if session_id:
        http.cookies.set("sessionid", session_id, domain="127.0.0.1")
    http.headers["Connection"] = "close"
    return http


class Run:
    """What all clients of one timed phase saw."""

    def __init__(self, deadline: float):
        self.deadline = deadline
        self.lock = threading.Lock()
        self.latencies: list[float] = []  # judgments: POST + redirect to the next page
        self.batch_latencies: list[float] = []  # start link + first item
        self.acknowledged = 0
        self.errors: list[str] = []

    def add(self, latency=None, batch_latency=None, error=None):
        with self.lock:
            if latency is not None:
                self.latencies.append(latency)
                self.acknowledged += 1
            if batch_latency is not None:
                self.batch_latencies.append(batch_latency)
            if error:
                self.errors.append(error)


def crowdworker(base: str, slug: str, http: requests.Session, run: Run) -> None:
    """Judge until the deadline; the batch in hand is left unfinished (it stays started)."""
    page = None
    while time.monotonic() < run.deadline:
        if page is None:
            t = time.perf_counter()
            page = http.get(f"{base}/work/{slug}/", timeout=60)
            run.add(batch_latency=time.perf_counter() - t)
        form = FORM.search(page.text)
        if form is None:
            if "/done/" in page.url:
                page = None
                continue
            run.add(error=f"no form: {page.status_code} {page.url} {page.text[:200]}")
            return
        token = CSRF.search(page.text).group(1)
        t = time.perf_counter()
        page = http.post(
            base + form.group(1),
            data={"csrfmiddlewaretoken": token, "choice": "left", "client_ms": "900"},
            headers={"Referer": page.url},
            timeout=60,
        )
        elapsed = time.perf_counter() - t
        if page.status_code == 200 and page.history:
            run.add(latency=elapsed)
        else:
            run.add(error=f"submit: {page.status_code} {page.url} {page.text[:200]}")
            return


def bare(base: str, http: requests.Session, run: Run) -> None:
    while time.monotonic() < run.deadline:
        t = time.perf_counter()
        response = http.get(f"{base}/accounts/login/", timeout=60)
        if response.status_code == 200:
            run.add(latency=time.perf_counter() - t)
        else:
            run.add(error=f"bare: {response.status_code}")
            return


def phase(target, sessions, seconds: float, *extra) -> tuple[Run, float]:
    run = Run(time.monotonic() + seconds)
    threads = [threading.Thread(target=target, args=(*extra, s, run)) for s in sessions]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    if run.errors:
        raise SystemExit(f"{len(run.errors)} errors, first: {run.errors[0]}")
    return run, elapsed


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
    }


def checked(before: int, run: Run, campaign) -> int:
    """The judgments stored now, after asserting that each acknowledged submit was stored
    once: 0 lost, 0 duplicated."""
    check = stored(campaign)
    lost = before + run.acknowledged - check["stored"]
    assert lost == 0 and check["duplicated"] == 0, (before, run.acknowledged, check)
    return check["stored"]


def serve(args, base, campaign, clients, seconds, before: int) -> tuple[dict, int]:
    run, elapsed = phase(crowdworker, clients, seconds, base, campaign.slug)
    now = checked(before, run, campaign)
    result = figures(run, elapsed)
    batch_ms = [v * 1000 for v in run.batch_latencies]
    result["batch_p50_ms"] = round(statistics.median(batch_ms), 1) if batch_ms else None
    return result, now


def medians(rounds: list[dict]) -> dict:
    keys = [k for k, v in rounds[0].items() if isinstance(v, int | float)]
    return {k: round(statistics.median(r[k] for r in rounds if r[k] is not None), 2) for k in keys}


def main():
    args = arguments()
    env = environment(args)
    os.environ.update(env)
    prepare(args, env)
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalhub.settings")
    django.setup()
    logging.getLogger("axes").setLevel(logging.WARNING)  # one line per account logged in
    from django.db import connections
    from harness import record

    sizes = [int(s) for s in args.sizes.split(",")]
    t = time.perf_counter()
    campaigns = [build_campaign(f"bench-{n}", n, args.clients) for n in sizes]
    with connections["default"].cursor() as cursor:
        # What autovacuum would have done by the time a campaign of this size goes live.
        cursor.execute("ANALYZE")
    print(f"built campaigns {sizes} in {time.perf_counter() - t:.0f} s")
    connections.close_all()

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_gunicorn(args, env, port)
    load = os.getloadavg()
    slice_ = args.seconds / args.rounds
    rounds = {"bare": [], **{n: [] for n in sizes}}
    try:
        # Warm-up: every page is compiled, and the result is checked before any timing.
        phase(bare, [session(None) for _ in range(args.clients)], args.warmup, base)
        clients = {
            n: [session(s) for s in sessions]
            for n, (_, sessions) in zip(sizes, campaigns, strict=True)
        }
        stored_now = {}
        for n, (campaign, _) in zip(sizes, campaigns, strict=True):
            warm, _ = phase(crowdworker, clients[n], args.warmup, base, campaign.slug)
            stored_now[n] = checked(0, warm, campaign)
        # Rounds interleave the reference and the campaigns, so that a burst of load from
        # elsewhere on the machine falls on all of them alike; each figure is the median.
        for r in range(args.rounds):
            bare_run, bare_elapsed = phase(
                bare, [session(None) for _ in range(args.clients)], slice_, base
            )
            rounds["bare"].append(figures(bare_run, bare_elapsed))
            for n, (campaign, _) in zip(sizes, campaigns, strict=True):
                result, stored_now[n] = serve(
                    args, base, campaign, clients[n], slice_, stored_now[n]
                )
                result["cost_in_bare_requests"] = round(
                    rounds["bare"][-1]["per_second"] / result["per_second"], 2
                )
                rounds[n].append(result)
            print(
                f"round {r + 1}/{args.rounds}: "
                + ", ".join(
                    f"{k}: {v[-1]['per_second']}/s p95 {v[-1]['p95_ms']} ms"
                    for k, v in rounds.items()
                )
            )
    finally:
        server.terminate()
        server.wait(timeout=30)
        connections.close_all()
        if not args.keep_db:
            psql(args, f"DROP DATABASE IF EXISTS {args.database}")

    reference = medians(rounds["bare"])
    results = {n: medians(rounds[n]) for n in sizes}
    print(f"medians of {args.rounds} rounds, {args.clients} clients, {args.seconds:.0f} s each")
    print(
        f"bare GET /accounts/login/: {reference['per_second']} req/s, "
        f"p50 {reference['p50_ms']} ms, p95 {reference['p95_ms']} ms"
    )
    for n, r in results.items():
        print(
            f"{n:>6} items: {r['per_second']} judgments/s, "
            f"submit+next p50 {r['p50_ms']} ms, p95 {r['p95_ms']} ms, p99 {r['p99_ms']} ms, "
            f"batch fetch p50 {r['batch_p50_ms']} ms; "
            f"one judgment = {r['cost_in_bare_requests']} bare requests; lost 0, duplicated 0"
        )
    if len(sizes) == 2:
        small, large = (results[n] for n in sorted(sizes))
        print(
            f"{max(sizes)} vs {min(sizes)} items: throughput x"
            f"{large['per_second'] / small['per_second']:.2f}, "
            f"p95 x{large['p95_ms'] / small['p95_ms']:.2f}"
        )
    after = os.getloadavg()
    print(f"load average: {load[0]:.2f} at start, {after[0]:.2f} at end, on {os.cpu_count()} CPUs")
    record(
        "serving",
        label=args.label,
        clients=args.clients,
        seconds=args.seconds,
        rounds=args.rounds,
        gunicorn=f"{args.gunicorn_workers} workers x {args.threads} threads",
        load_average=[round(load[0], 2), round(after[0], 2)],
        bare=reference,
        campaigns={str(n): results[n] for n in sizes},
        lost=0,
        duplicated=0,
    )


if __name__ == "__main__":
    main()
