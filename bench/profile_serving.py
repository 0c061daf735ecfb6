"""Where the server's time goes on a crowdworker's judgment (issue 15, benchmark 6), without
HTTP or a load generator: the production WSGI application (``evalhub.wsgi``) called
in-process, in the production shape (DEBUG=0, PostgreSQL with persistent connections,
Redis cache and sessions), as gunicorn calls it for each request.

Run from the repository root: ``.venv/bin/python bench/profile_serving.py [--help]``.

It builds an A/B campaign and one logged-in crowdworker, then repeats judgments (a submit
POST with the CSRF token of the page, answered with the next item in place as the task
page's script asks; with ``--no-script``, a plain POST and the GET of the next item it
redirects to) and, for reference, the bare login page. Printed per request: CPU time (process time, which
other load on the machine inflates far less than wall time), SQL statements and Redis
commands, the judgment's cost in bare requests, and with ``--profile`` the functions that
take the most of it (cProfile). Everything is checked: each submit is stored once.
"""

import argparse
import cProfile
import io
import pstats
import re
import statistics
import sys
import time
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode, urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_serving import (  # noqa: E402
    CSRF,
    FORM,
    add_celery_arguments,
    build_campaign,
    empty_broker,
    psql,
    setup_django,
)


def arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, default=10, help="timed batches of 20 items")
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--database", default="evalhub_bench_profile")
    parser.add_argument("--server", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--cache", default="redis://127.0.0.1:6379/7")
    parser.add_argument(
        "--profile",
        nargs="?",
        const="batch",
        choices=["batch", "start"],
        help="print cProfile's top functions over whole batches (or the start link alone)",
    )
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--verbose", action="store_true", help="print one judgment's SQL")
    parser.add_argument("--keep-db", action="store_true", help="do not drop the database")
    parser.add_argument(
        "--no-script", action="store_true", help="judgments as plain form posts and redirects"
    )
    # Background tasks are queued in the broker, as the web process does; nobody runs them
    # here (bench_serving.py counts the worker that does).
    add_celery_arguments(parser)
    # build_campaign and environment read these.
    parser.set_defaults(clients=1)
    return parser.parse_args()


class Browser:
    """One crowdworker's browser, talking WSGI to the application."""

    def __init__(self, application, session_id: str | None, script: bool = True):
        self.application = application
        self.cookies = {"sessionid": session_id} if session_id else {}
        self.script = script

    def request(self, method: str, path: str, form: dict | None = None, referer: str = ""):
        body = urlencode(form or {}).encode()
        environ = {
            "REQUEST_METHOD": method,
            "PATH_INFO": path,
            "QUERY_STRING": "",
            "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "8000",
            "HTTP_HOST": "127.0.0.1:8000",
            "REMOTE_ADDR": "127.0.0.1",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "HTTP_COOKIE": "; ".join(f"{k}={v}" for k, v in self.cookies.items()),
            "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(body),
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": False,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
            "wsgi.version": (1, 0),
        }
        if method == "POST":
            environ["CONTENT_TYPE"] = "application/x-www-form-urlencoded"
            environ["CONTENT_LENGTH"] = str(len(body))
            environ["HTTP_REFERER"] = referer
            if self.script:
                environ["HTTP_X_EVALHUB_IN_PLACE"] = "1"
        status_headers = {}

        def start_response(status, headers, exc_info=None):
            status_headers["status"] = int(status.split()[0])
            status_headers["headers"] = headers

        chunks = self.application(environ, start_response)
        try:
            content = b"".join(chunks)
        finally:
            if hasattr(chunks, "close"):
                chunks.close()
        for name, value in status_headers["headers"]:
            if name.lower() == "set-cookie":
                cookie = SimpleCookie(value)
                for key, morsel in cookie.items():
                    self.cookies[key] = morsel.value
        headers = {k.lower(): v for k, v in status_headers["headers"]}
        return status_headers["status"], headers, content.decode()


def follow(browser: Browser, status: int, headers: dict) -> tuple[str, str]:
    """The page a redirect answer (or its in-place form) points to, and its path."""
    assert status in (302, 204), status
    path = urlsplit(headers["location" if status == 302 else "x-evalhub-redirect"]).path
    status, _, page = browser.request("GET", path)
    assert status == 200, status
    return path, page


def judgment(browser: Browser, page_path: str, page: str) -> tuple[str, str]:
    """Submit the item on `page`; the next page (in place, or after the redirect) and its
    path."""
    form = FORM.search(page)
    token = CSRF.search(page).group(1)
    status, headers, text = browser.request(
        "POST",
        form.group(1),
        {"csrfmiddlewaretoken": token, "choice": "left", "client_ms": "900"},
        referer=f"http://127.0.0.1:8000{page_path}",
    )
    if status == 200:
        return urlsplit(headers["x-evalhub-location"]).path, text
    return follow(browser, status, headers)


class Counters:
    """SQL statements and Redis commands issued while it is active."""

    def __init__(self):
        self.sql = 0
        self.redis = 0
        self.statements: list[str] = []
        self.commands: list[str] = []

    def __enter__(self):
        from django.db import connection
        from redis.client import Redis

        self._wrapper = connection.execute_wrapper(self._count_sql)
        self._wrapper.__enter__()
        self._original = Redis.execute_command
        counters = self

        def execute_command(client, *args, **options):
            counters.redis += 1
            counters.commands.append(str(args[0]))
            return counters._original(client, *args, **options)

        Redis.execute_command = execute_command
        return self

    def __exit__(self, *exc):
        from redis.client import Redis

        Redis.execute_command = self._original
        self._wrapper.__exit__(*exc)

    def _count_sql(self, execute, sql, params, many, context):
        self.sql += 1
        self.statements.append(sql)
        return execute(sql, params, many, context)


def start(browser: Browser, slug: str) -> tuple[str, str]:
    """The start link and the first item it redirects to."""
    status, headers, _ = browser.request("GET", f"/work/{slug}/")
    return follow(browser, status, headers)


class Costs:
    """CPU seconds spent on each part of a batch, summed over batches."""

    def __init__(self):
        self.cpu = {"start": 0.0, "judgment": 0.0, "last": 0.0}
        self.batches = 0
        self.judgments = 0

    def batch(self, browser: Browser, slug: str, batch_size: int) -> None:
        """One batch as a crowdworker does it: start link, every item, the done page."""
        t0 = time.process_time()
        path, page = start(browser, slug)
        t1 = time.process_time()
        for _ in range(batch_size - 1):
            path, page = judgment(browser, path, page)
        t2 = time.process_time()
        path, page = judgment(browser, path, page)
        assert path.endswith("/done/"), path
        t3 = time.process_time()
        self.cpu["start"] += t1 - t0
        self.cpu["judgment"] += (t2 - t1) / (batch_size - 1)
        self.judgments += batch_size
        self.cpu["last"] += t3 - t2
        self.batches += 1

    def per_batch(self, part: str) -> float:
        return self.cpu[part] / self.batches


def database_cpu() -> float:
    """CPU seconds of this process's PostgreSQL backend so far (the server is on this machine)."""
    from bench_serving import cpu_seconds
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    return cpu_seconds(pid)


def calls(fn):
    """Python function calls made by `fn()` (a measure of the interpreter's work that the
    machine's other load does not change), and what it returned."""
    profiler = cProfile.Profile()
    result = profiler.runcall(fn)
    return pstats.Stats(profiler).total_calls, result


def counted(fn):
    """((SQL and Redis counters, Python calls), what `fn()` returned)."""
    with Counters() as counters:
        n_calls, result = calls(fn)
    return (counters, n_calls), result


def main():
    args = arguments()
    setup_django(args)
    from django.db import connections

    from annotation.models import Judgment
    from evalhub.wsgi import application

    try:
        campaign, (session_id,) = build_campaign("profile", args.items, 1)
        connections.close_all()
        worker = Browser(application, session_id, script=not args.no_script)
        anonymous = Browser(application, None)
        size = campaign.batch_size
        login = lambda: anonymous.request("GET", "/accounts/login/")  # noqa: E731

        Costs().batch(worker, campaign.slug, size)  # warm-up: compiled, connected
        login()
        # The work of each part, counted on the next batch.
        state = start(worker, campaign.slug)
        parts = {}
        parts["judgment"], state = counted(lambda: judgment(worker, *state))
        for _ in range(size - 2):
            state = judgment(worker, *state)
        parts["last"], state = counted(lambda: judgment(worker, *state))
        assert state[0].endswith("/done/"), state[0]
        # A new batch, as every batch fetch after a finished batch is.
        parts["start"], _ = counted(lambda: start(worker, campaign.slug))
        parts["bare"], _ = counted(login)
        # Finish the batch the start above opened, so that the timed batches start fresh.
        path, page = start(worker, campaign.slug)
        while FORM.search(page):
            path, page = judgment(worker, path, page)

        costs, bare, database = Costs(), [], 0.0
        for _ in range(args.batches):
            before = database_cpu()
            costs.batch(worker, campaign.slug, size)
            database += database_cpu() - before
            started = time.process_time()
            for _ in range(size):
                login()
            bare.append((time.process_time() - started) / size)
        bare_cpu = statistics.median(bare)

        def line(name, cpu, part):
            counters, n_calls = parts[part]
            print(
                f"{name:<34} {cpu * 1000:6.2f} ms CPU, {n_calls:6d} Python calls, "
                f"{counters.sql:2d} SQL, {counters.redis} Redis"
            )

        print(f"{args.batches} batches of {size} on a {args.items}-item campaign; per request:")
        line("judgment (submit, next item)", costs.per_batch("judgment"), "judgment")
        line("last judgment (submit + done page)", costs.per_batch("last"), "last")
        line("batch fetch (start link + item 1)", costs.per_batch("start"), "start")
        line("bare GET /accounts/login/", bare_cpu, "bare")
        whole = (
            costs.cpu["start"] + costs.cpu["judgment"] * (size - 1) + costs.cpu["last"]
        ) / costs.judgments
        print(
            f"per judgment, batch fetch included: {whole * 1000:.2f} ms CPU = "
            f"{whole / bare_cpu:.2f} bare requests; within a batch: "
            f"{costs.per_batch('judgment') / bare_cpu:.2f} bare requests"
        )
        print(
            f"PostgreSQL CPU per judgment, batch fetch included: "
            f"{database * 1000 / costs.judgments:.2f} ms (the bare page: none)"
        )
        if args.verbose:
            for part in ("judgment", "start"):
                counters = parts[part][0]
                print("\n".join([f"{part} SQL:", *counters.statements]))
                print("\n".join([f"{part} Redis:", *counters.commands]))
        if args.profile:
            profiler = cProfile.Profile(time.process_time)
            for _ in range(args.batches):
                if args.profile == "start":
                    path, page = profiler.runcall(start, worker, campaign.slug)
                    while FORM.search(page):
                        path, page = judgment(worker, path, page)
                else:
                    profiler.runcall(costs.batch, worker, campaign.slug, size)
            out = io.StringIO()
            stats = pstats.Stats(profiler, stream=out)
            stats.sort_stats("cumulative").print_stats(args.top)
            stats.sort_stats("tottime").print_stats(args.top)
            print(re.sub(r"/[^ ]*/site-packages/", "", out.getvalue()))
        total = Judgment.objects.filter(campaign=campaign).count()
        pairs = Judgment.objects.filter(campaign=campaign).values("assignment", "item").distinct()
        assert total == pairs.count(), "a judgment was stored twice"
        print(f"{total} judgments stored, none twice")
    finally:
        connections.close_all()
        empty_broker(args)
        if not args.keep_db:
            psql(args, f"DROP DATABASE IF EXISTS {args.database}")


if __name__ == "__main__":
    main()
