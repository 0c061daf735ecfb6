"""`evalhub`: the common flows of a study from the shell, over `EvalHub`.

evalhub login                       a token for your username and password, saved
evalhub whoami                      the server and the token in use
evalhub submit SYSTEM FILE -p SET   upload responses (--wait: until scored)
evalhub campaigns list | progress | launch-request
evalhub follow campaign|judge-run|analysis|submission ID   a progress bar to the end
evalhub results CAMPAIGN --out FILE the judgments (csv or jsonl)
"""

from __future__ import annotations

import json
import time
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

from . import EvalHub, EvalHubError
from .config import ConfigError, resolve, write_config

app = typer.Typer(
    help="EvalHub from the shell: submit responses, request launches, follow runs, "
    "download results. The server is EVALHUB_URL (or the config file's url); the token "
    "EVALHUB_TOKEN (or the config file's, written by `evalhub login`).",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
campaigns_app = typer.Typer(help="Campaigns you manage.", no_args_is_help=True)
app.add_typer(campaigns_app, name="campaigns")

# Soft wrap: a line piped to a file or a script is not broken at 80 columns.
out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)

UrlOption = Annotated[
    str | None, typer.Option("--url", help="The server (default: EVALHUB_URL, the config file).")
]


def _client(url: str | None) -> EvalHub:
    try:
        return EvalHub(url)
    except ConfigError as exc:
        err.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from exc


def _fail(exc: EvalHubError) -> typer.Exit:
    where = f"HTTP {exc.status}" if exc.status is not None else "No answer"
    err.print(f"[red]{where}[/red] from {exc.method} {exc.url}".rstrip())
    for error in exc.errors:
        locator = error.get("field") or (
            f"line {error['line']}" if error.get("line") is not None else ""
        )
        err.print(f"  {locator + ': ' if locator else ''}{error.get('message', '')}", markup=False)
    if exc.error_count > len(exc.errors):
        err.print(f"  ({exc.error_count} errors in all)")
    if exc.status == 401:
        err.print("Sign in with `evalhub login`, or set EVALHUB_TOKEN.")
    return typer.Exit(1)


def _print_json(value: Any) -> None:
    out.print_json(json.dumps(value, default=str))


@app.command()
def login(
    username: Annotated[str, typer.Option(prompt=True)],
    password: Annotated[str, typer.Option(prompt=True, hide_input=True)],
    url: UrlOption = None,
    name: Annotated[
        str, typer.Option(help="The token's name; a login replaces your token of that name.")
    ] = "evalhub CLI",
) -> None:
    """Get a token for your username and password and save it in the config file."""
    server = resolve(url).url
    with EvalHub(server, token="") as client:
        try:
            new = client.tokens.login(username, password, name=name)
        except EvalHubError as exc:
            raise _fail(exc) from exc
    path = write_config(server, new.token)
    out.print(f"Signed in to {server} as {username}; token {new.name!r} saved in {path}")
    if new.expiry:
        out.print(f"It expires on {new.expiry:%Y-%m-%d}.")


@app.command()
def whoami(url: UrlOption = None) -> None:
    """The server and the token this CLI uses."""
    with _client(url) as client:
        try:
            token = client.tokens.current()
        except EvalHubError as exc:
            raise _fail(exc) from exc
        expiry = f", expires {token.expiry:%Y-%m-%d}" if token.expiry else ""
        out.print(f"{client.url}: token {token.name!r} ({token.starts_with}…{expiry})")


@app.command()
def submit(
    system: Annotated[str, typer.Argument(help="The system's slug.")],
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, readable=True)],
    prompt_set: Annotated[str, typer.Option("--prompt-set", "-p", help="The prompt set's slug.")],
    format: Annotated[
        str | None, typer.Option(help="txt, jsonl or csv (default: from the file's name).")
    ] = None,
    baseline: Annotated[
        list[str] | None, typer.Option("--baseline", "-b", help="A baseline system (repeat).")
    ] = None,
    wait: Annotated[bool, typer.Option(help="Wait until the submission is scored.")] = False,
    timeout: Annotated[float, typer.Option(min=1, max=86400)] = 600,
    url: UrlOption = None,
) -> None:
    """Upload a system's responses to a prompt set."""
    with _client(url) as client:
        try:
            submission = client.systems.submit(
                system, prompt_set, file, format=format, baselines=baseline or ()
            )
            out.print(f"Submission {submission.id}: {submission.status}")
            if wait:
                submission = _follow_submission(client, submission.id, timeout)
        except EvalHubError as exc:
            raise _fail(exc) from exc
    if submission.status == "failed":
        err.print(f"[red]The submission failed[/red]: {submission.error_report}", markup=True)
        raise typer.Exit(1)
    if submission.metrics:
        _print_json(submission.metrics)


@campaigns_app.command("list")
def campaigns_list(
    status: Annotated[str | None, typer.Option(help="draft, live, paused, finished")] = None,
    search: Annotated[str | None, typer.Option()] = None,
    url: UrlOption = None,
) -> None:
    """The campaigns you manage, with their judgment counts."""
    with _client(url) as client:
        try:
            for campaign in client.campaigns.list(status=status, search=search):
                out.print(
                    f"{campaign.slug}\t{campaign.status}\t{campaign.task_kind}\t"
                    f"{campaign.judgments}/{campaign.judgments_needed}",
                    markup=False,
                )
        except EvalHubError as exc:
            raise _fail(exc) from exc


@campaigns_app.command("progress")
def campaigns_progress(campaign: str, url: UrlOption = None) -> None:
    """Items done, judgments, rates, cost."""
    with _client(url) as client:
        try:
            _print_json(client.campaigns.progress(campaign).model_dump(mode="json"))
        except EvalHubError as exc:
            raise _fail(exc) from exc


class Platform(StrEnum):
    prolific = "prolific"
    mturk = "mturk"


@campaigns_app.command("launch-request")
def campaigns_launch_request(
    campaign: str,
    provider: Annotated[
        Platform | None, typer.Option(help="Request a paid launch on this platform.")
    ] = None,
    sandbox: Annotated[
        bool | None, typer.Option("--sandbox/--live", help="The platform's sandbox.")
    ] = None,
    url: UrlOption = None,
) -> None:
    """Request a paid launch (with --provider), or show the latest request."""
    with _client(url) as client:
        try:
            if provider is None:
                request = client.campaigns.launch_request(campaign)
            else:
                request = client.campaigns.request_launch(campaign, provider.value, sandbox=sandbox)
        except EvalHubError as exc:
            raise _fail(exc) from exc
    out.print(
        f"Launch of {request.campaign} on {request.provider}"
        f"{' (sandbox)' if request.platform_sandbox else ''}: {request.state}",
        markup=False,
    )
    if request.reason:
        out.print(f"Reason: {request.reason}", markup=False)


class Followed(StrEnum):
    campaign = "campaign"
    judge_run = "judge-run"
    analysis = "analysis"
    submission = "submission"


def _reader(client: EvalHub, kind: Followed, ident: str):
    """A function returning (done, total, status, finished) for what is followed."""
    if kind is Followed.campaign:

        def read():
            p = client.campaigns.progress(ident)
            return p.judgments, p.judgments_needed, p.status, p.status == "finished"

    elif kind is Followed.judge_run:
        run_id = _number(ident)

        def read():
            p = client.judge_runs.progress(run_id)
            done = p.items_done + p.items_failed + p.items_skipped
            return done, p.items_total, p.status, p.status in client.judge_runs.FINAL

    elif kind is Followed.analysis:
        run_id = _number(ident)

        def read():
            r = client.analyses.get(run_id)
            finished = r.status in client.analyses.FINAL
            return (1 if finished else 0), 1, r.status, finished

    else:

        def read():
            s = client.submissions.get(ident)
            finished = s.status in client.submissions.FINAL
            return (1 if finished else 0), 1, s.status, finished

    return read


def _number(ident: str) -> int:
    try:
        return int(ident)
    except ValueError:
        raise typer.BadParameter(f"a run's id is a number, not {ident!r}") from None


def _follow(read, label: str, *, interval: float, timeout: float) -> str:
    """Polls `read` with a progress bar until it says finished; the last status."""
    deadline = time.monotonic() + timeout
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=out) as bar:
        task = bar.add_task(label, total=None, status="")
        while True:
            done, total, status, finished = read()
            bar.update(task, completed=done, total=max(total, 1), status=status)
            if finished:
                return status
            if time.monotonic() + interval > deadline:
                raise TimeoutError(f"{label}: still {status} after {timeout:g} s")
            time.sleep(interval)


def _follow_submission(client: EvalHub, public_id: str, timeout: float):
    _follow(
        _reader(client, Followed.submission, public_id),
        f"submission {public_id}",
        interval=1,
        timeout=timeout,
    )
    return client.submissions.get(public_id)


@app.command()
def follow(
    kind: Annotated[Followed, typer.Argument(help="What to follow.")],
    ident: Annotated[str, typer.Argument(metavar="ID", help="Its slug or id.")],
    interval: Annotated[float, typer.Option(min=0.1, max=3600, help="Seconds between polls.")] = 5,
    timeout: Annotated[float, typer.Option(min=1, max=7 * 86400, help="Give up after.")] = 86400,
    url: UrlOption = None,
) -> None:
    """Follow a campaign, judge run, analysis run or submission to its end."""
    with _client(url) as client:
        try:
            status = _follow(
                _reader(client, kind, ident),
                f"{kind.value} {ident}",
                interval=interval,
                timeout=timeout,
            )
        except EvalHubError as exc:
            raise _fail(exc) from exc
        except TimeoutError as exc:
            err.print(str(exc), markup=False)
            raise typer.Exit(3) from exc
    out.print(f"{kind.value} {ident}: {status}", markup=False)
    if status == "failed":
        raise typer.Exit(1)


class ExportFormat(StrEnum):
    csv = "csv"
    jsonl = "jsonl"


@app.command()
def results(
    campaign: str,
    out_path: Annotated[
        Path, typer.Option("--out", "-o", dir_okay=False, help="Where to write the judgments.")
    ],
    format: Annotated[ExportFormat, typer.Option()] = ExportFormat.csv,
    url: UrlOption = None,
) -> None:
    """Download every judgment of a campaign (streamed into --out)."""
    partial = out_path.with_name(out_path.name + ".part")
    with _client(url) as client:
        try:
            with partial.open("wb") as handle:
                written = client.campaigns.export(campaign, handle, format=format.value)
        except EvalHubError as exc:
            partial.unlink(missing_ok=True)
            raise _fail(exc) from exc
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
    # A download cut short never takes the name of a finished one.
    partial.replace(out_path)
    out.print(f"{written} bytes written to {out_path}", markup=False)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
