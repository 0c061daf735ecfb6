"""`pip install ./clients/python`, then `evalhub login`, `evalhub submit` and `evalhub
results` as a researcher runs them, against `make run`'s server: the manage.py commands
`make -n run` prints (migrate, load_demo, serve_embedded, with its Celery worker), on a
database and broker of the test's own.

The package is installed into a new venv by the pip of that venv, offline: the package
builds with its in-tree backend (no build dependency to fetch) and `--no-deps`, its
dependencies (httpx, pydantic, tenacity, typer) reached through a .pth naming this
interpreter's site-packages, where requirements.txt put them.
"""

import csv
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import sysconfig
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
# What the tests' own settings must not pass to the server: it runs as make run does.
NOT_INHERITED = ("DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL", "EVALHUB_USE_EXISTING_DB")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def make_run_commands(port: int) -> list[list[str]]:
    """The manage.py commands of `make run PORT=port`, run by this interpreter."""
    dry = subprocess.run(
        ["make", "-n", "run", f"PORT={port}"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    commands = [shlex.split(line) for line in dry.splitlines() if " manage.py " in line]
    return [[sys.executable, *command[1:]] for command in commands]


def server_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in NOT_INHERITED}
    # make run's exports (the Makefile's `run: export ...`), then a database, broker and
    # media of the test's own instead of the working tree's.
    env.update(
        DEBUG="1",
        CELERY_BROKER_URL="filesystem://",
        EVALHUB_OUTBOUND_ALLOW="127.0.0.1:8009",
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        EVALHUB_EMBEDDED_BROKER_DIR=str(tmp_path / "broker"),
        EVALHUB_MEDIA_ROOT=str(tmp_path / "media"),
    )
    return env


def install_client(venv: Path) -> Path:
    """A new venv with the client installed by its own pip; its `evalhub` script."""
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    site = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(site, "evalhub-test-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            str(ROOT / "clients" / "python"),
        ],
        check=True,
        env={**os.environ, "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    return venv / "bin" / "evalhub"


def wait_for(url: str, server: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"make run's server exited with {server.returncode}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    pytest.fail(f"make run's server did not answer {url} within {seconds} s")


def test_the_installed_cli_submits_and_downloads_results_from_make_runs_server(tmp_path):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = server_env(tmp_path)
    migrate, load_demo, serve = make_run_commands(port)
    assert (migrate[2], load_demo[2], serve[2:]) == (
        "migrate",
        "load_demo",
        ["serve_embedded", f"127.0.0.1:{port}"],
    )
    # The install goes on while the server's database is made: half the test's time.
    with ThreadPoolExecutor(max_workers=1) as background:
        installed = background.submit(install_client, tmp_path / "venv")
        subprocess.run(migrate, cwd=ROOT, env=env, check=True, capture_output=True)
        demo = subprocess.run(
            load_demo, cwd=ROOT, env=env, check=True, capture_output=True, text=True
        )
        evalhub = installed.result()
    passwords = dict(re.findall(r"account:\s+(\w+) / (\S+)", demo.stdout))
    # Its own session: the server, its autoreloader's child, the worker and the demo bot
    # are stopped together at the end, and nothing else.
    server = subprocess.Popen(
        serve,
        cwd=ROOT,
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(f"{url}/api/", server)
        cli_env = {
            **os.environ,
            "EVALHUB_CONFIG": str(tmp_path / "config.toml"),
            "EVALHUB_URL": "",
            "EVALHUB_TOKEN": "",
        }

        def cli(*args):
            return subprocess.run(
                [str(evalhub), *args], env=cli_env, capture_output=True, text=True, timeout=300
            )

        # The researcher signs in and submits responses to the demo's prompt set.
        login = cli(
            "login", "--url", url, "--username", "researcher", "--password", passwords["researcher"]
        )
        assert login.returncode == 0, login.stderr
        prompts = httpx.get(f"{url}/api/prompt-sets/demo-daily/").json()["prompt_count"]
        responses = tmp_path / "responses.txt"
        responses.write_text("".join(f"answer number {i}\n" for i in range(prompts)))
        submitted = cli(
            "submit",
            "persona-bot",
            str(responses),
            "-p",
            "demo-daily",
            "--wait",
            "--timeout",
            "240",
        )
        assert submitted.returncode == 0, submitted.stdout + submitted.stderr
        assert f'"n_responses": {prompts}' in submitted.stdout

        # The admin downloads a demo campaign's judgments.
        login = cli("login", "--url", url, "--username", "admin", "--password", passwords["admin"])
        assert login.returncode == 0, login.stderr
        target = tmp_path / "judgments.csv"
        results = cli("results", "demo-likert", "--out", str(target))
        assert results.returncode == 0, results.stderr
        rows = list(csv.DictReader(target.open()))
        assert len(rows) == 10  # load_demo's judgments of demo-likert
        assert {row["campaign"] for row in rows} == {"demo-likert"}
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
