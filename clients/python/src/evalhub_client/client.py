"""`EvalHub`: every operation of EvalHub's REST API, grouped by resource.

Each method is one operation; its `self._t.call("METHOD", "/api/...")` names the operation
as the OpenAPI schema does, and the server's tests check every such pair against the schema
(tests/clients/test_schema_coverage.py), so the client cannot drift from the API.
Lists come back as `Paginated` (iterate to walk every page); the main resources as typed
models (evalhub_client.models); the rest as the API's JSON.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import IO, Any, BinaryIO

import httpx

from . import models as m
from ._transport import EvalHubError, Paginated, Transport
from .config import resolve

JSON = dict[str, Any]
# What an upload accepts: a path, the bytes, or an open binary file.
Upload = str | Path | bytes | BinaryIO

# Operations of the API the client leaves out, and why (the coverage test reads this).
LEFT_OUT: dict[str, str] = {
    "POST /api/crowd/prolific/hooks/": "Prolific's own calls, signed with the workspace's secret",
}


def _upload(source: Upload, default_name: str) -> tuple[str, bytes, str]:
    """(filename, content, content type) of a multipart file. The content is read whole so
    that a retried request (a 429) sends it again."""
    if isinstance(source, (str, Path)):
        path = Path(source)
        return path.name, path.read_bytes(), "application/octet-stream"
    if isinstance(source, bytes):
        return default_name, source, "application/octet-stream"
    name = Path(getattr(source, "name", "") or default_name).name
    return name, source.read(), "application/octet-stream"


def _jsonl(rows: Iterable[Mapping[str, Any]]) -> bytes:
    lines = [json.dumps(dict(row), ensure_ascii=False) for row in rows]
    if not lines:
        raise ValueError("no rows to upload")
    return ("\n".join(lines) + "\n").encode()


def _fields(**values: Any) -> JSON:
    """The body without the fields left unset (None): the server's defaults apply."""
    return {name: value for name, value in values.items() if value is not None}


def _form(values: Mapping[str, Any]) -> dict[str, Any]:
    """Multipart text fields: lists as repeated fields, booleans as the API reads them."""
    form: dict[str, Any] = {}
    for name, value in values.items():
        if value is None:
            continue
        if isinstance(value, bool):
            form[name] = "true" if value else "false"
        elif isinstance(value, (list, tuple)):
            form[name] = [str(v) for v in value]
        else:
            form[name] = str(value)
    return form


def _poll(
    read: Callable[[], Any],
    done: Callable[[Any], bool],
    *,
    timeout: float,
    interval: float,
) -> Any:
    if timeout <= 0 or interval <= 0:
        raise ValueError("timeout and interval are positive numbers of seconds")
    deadline = time.monotonic() + timeout
    while True:
        value = read()
        if done(value):
            return value
        if time.monotonic() + interval > deadline:
            raise TimeoutError(f"not finished after {timeout:g} s: {value!r}")
        time.sleep(interval)


def _card(license: str | None, citation: str | None) -> dict[str, Any]:
    """The query of a Hugging Face dataset download (a zip of Parquet tables and README.md,
    its dataset card): the card's licence and citation."""
    return {"license": license, "citation": citation}


class _Group:
    def __init__(self, transport: Transport):
        self._t = transport


class Tokens(_Group):
    def login(self, username: str, password: str, name: str | None = None) -> m.NewToken:
        """A token for a username and password; it replaces the account's token of the
        same name ("API login" by default), so logging in at every run keeps one."""
        body = _fields(username=username, password=password, name=name)
        return m.NewToken(**self._t.call("POST", "/api/token/", json=body))

    def list(self, **filters: Any) -> Paginated[m.ApiToken]:
        return self._t.paginate("/api/tokens/", params=filters, item=lambda r: m.ApiToken(**r))

    def create(self, name: str) -> JSON:
        """A new token (`token` in the answer, shown this once) under `name`."""
        return self._t.call("POST", "/api/tokens/", json={"name": name})

    def revoke(self, starts_with: str) -> None:
        self._t.call("DELETE", "/api/tokens/{starts_with}/", {"starts_with": starts_with})

    def current(self) -> m.ApiToken:
        """The token this client sends."""
        for token in self.list():
            if token.current:
                return token
        raise EvalHubError(None, [{"line": None, "message": "signed in without a token"}])


class Systems(_Group):
    def list(self, **filters: Any) -> Paginated[m.System]:
        """Filters: search, ordering, visibility, is_baseline."""
        return self._t.paginate("/api/systems/", params=filters, item=lambda r: m.System(**r))

    def get(self, slug: str) -> m.System:
        return m.System(**self._t.call("GET", "/api/systems/{slug}/", {"slug": slug}))

    def create(self, slug: str, name: str, **fields: Any) -> m.System:
        body = {"slug": slug, "name": name, **fields}
        return m.System(**self._t.call("POST", "/api/systems/", json=body))

    def update(self, slug: str, **fields: Any) -> m.System:
        """Changes the fields given."""
        return m.System(
            **self._t.call("PATCH", "/api/systems/{slug}/", {"slug": slug}, json=fields)
        )

    def replace(self, slug: str, **fields: Any) -> m.System:
        """PUT: the required fields (`name`) with any others; `slug` stays unless a new one
        is given."""
        body = {"slug": slug, **fields}
        return m.System(**self._t.call("PUT", "/api/systems/{slug}/", {"slug": slug}, json=body))

    def submissions(self, slug: str, **filters: Any) -> Paginated[m.Submission]:
        return self._t.paginate(
            "/api/systems/{slug}/submissions/",
            {"slug": slug},
            params=filters,
            item=lambda r: m.Submission(**r),
        )

    def submit(
        self,
        slug: str,
        prompt_set: str,
        file: Upload | None = None,
        *,
        rows: Iterable[Mapping[str, Any]] | None = None,
        format: str | None = None,
        baselines: Iterable[str] = (),
    ) -> m.Submission:
        """Uploads responses to a prompt set: a file (txt, jsonl or csv), or `rows`, dicts
        `{"prompt": <prompt id>, "response": "..."}` sent as JSON lines."""
        if (file is None) == (rows is None):
            raise ValueError("give either a file or rows")
        if rows is not None:
            upload = ("responses.jsonl", _jsonl(rows), "application/jsonl")
            format = format or "jsonl"
        else:
            upload = _upload(file, "responses.txt")
        form = _form({"prompt_set": prompt_set, "format": format, "baselines": list(baselines)})
        answer = self._t.call(
            "POST",
            "/api/systems/{slug}/submissions/",
            {"slug": slug},
            data=form,
            files={"file": upload},
        )
        return m.Submission(**answer)


class Submissions(_Group):
    FINAL = frozenset({"scored", "failed"})

    def get(self, public_id: str) -> m.Submission:
        answer = self._t.call("GET", "/api/submissions/{public_id}/", {"public_id": public_id})
        return m.Submission(**answer)

    def wait(self, public_id: str, *, timeout: float = 300, interval: float = 1) -> m.Submission:
        """The submission once scored (or failed)."""
        return _poll(
            lambda: self.get(public_id),
            lambda s: s.status in self.FINAL,
            timeout=timeout,
            interval=interval,
        )


class Endpoints(_Group):
    """A system's bot endpoint (its `auth_token` is write-only)."""

    def get(self, system: str) -> JSON:
        return self._t.call("GET", "/api/systems/{slug}/endpoint/", {"slug": system})

    def put(self, system: str, **fields: Any) -> JSON:
        return self._t.call("PUT", "/api/systems/{slug}/endpoint/", {"slug": system}, json=fields)

    def update(self, system: str, **fields: Any) -> JSON:
        return self._t.call("PATCH", "/api/systems/{slug}/endpoint/", {"slug": system}, json=fields)

    def delete(self, system: str) -> None:
        self._t.call("DELETE", "/api/systems/{slug}/endpoint/", {"slug": system})

    def test(self, system: str) -> JSON:
        """One real request to the bot: {"ok", "latency_ms", "status", "reply", ...}."""
        return self._t.call("POST", "/api/systems/{slug}/endpoint/test/", {"slug": system})

    def calls(self, system: str, **filters: Any) -> Paginated[JSON]:
        return self._t.paginate(
            "/api/systems/{slug}/endpoint/calls/", {"slug": system}, params=filters, item=dict
        )


class ModelEndpoints(_Group):
    """Endpoints of no system, such as a judge's, by id (`Judge.endpoint["id"]`)."""

    def get(self, endpoint_id: int) -> JSON:
        return self._t.call("GET", "/api/endpoints/{id}/", {"id": endpoint_id})

    def update(self, endpoint_id: int, **fields: Any) -> JSON:
        return self._t.call("PATCH", "/api/endpoints/{id}/", {"id": endpoint_id}, json=fields)

    def test(self, endpoint_id: int) -> JSON:
        """One real request to the model: {"ok", "latency_ms", "status", "reply", ...}."""
        return self._t.call("POST", "/api/endpoints/{id}/test/", {"id": endpoint_id})

    def calls(self, endpoint_id: int, **filters: Any) -> Paginated[JSON]:
        return self._t.paginate(
            "/api/endpoints/{id}/calls/", {"id": endpoint_id}, params=filters, item=dict
        )


class PromptSets(_Group):
    def list(self, **filters: Any) -> Paginated[m.PromptSet]:
        return self._t.paginate(
            "/api/prompt-sets/", params=filters, item=lambda r: m.PromptSet(**r)
        )

    def get(self, slug: str) -> m.PromptSetDetail:
        answer = self._t.call("GET", "/api/prompt-sets/{slug}/", {"slug": slug})
        return m.PromptSetDetail(**answer)

    def create(
        self,
        slug: str,
        name: str,
        file: Upload | None = None,
        *,
        prompts: Iterable[Mapping[str, Any]] | None = None,
        description: str | None = None,
        source: str | None = None,
        version: str | None = None,
    ) -> m.PromptSet:
        """A prompt set (staff) from a file (.txt or .jsonl) or from `prompts`, dicts
        `{"id", "context": [...], "references": [...]}` sent as JSON lines."""
        if (file is None) == (prompts is None):
            raise ValueError("give either a file or prompts")
        if prompts is not None:
            upload = ("prompts.jsonl", _jsonl(prompts), "application/jsonl")
        else:
            upload = _upload(file, "prompts.txt")
        form = _form(
            {
                "slug": slug,
                "name": name,
                "description": description,
                "source": source,
                "version": version,
            }
        )
        answer = self._t.call("POST", "/api/prompt-sets/", data=form, files={"file": upload})
        return m.PromptSet(**answer)


class Conversations(_Group):
    def import_file(self, file: Upload, *, source: str | None = None) -> JSON:
        """Conversations in the interchange format (.jsonl)."""
        return self._t.call(
            "POST",
            "/api/conversations/import/",
            data=_form({"source": source}),
            files={"file": _upload(file, "conversations.jsonl")},
        )

    def upload_seeds(self, file: Upload) -> JSON:
        """Seed conversations, the openings tournaments continue from."""
        return self._t.call(
            "POST",
            "/api/conversations/seeds/",
            files={"file": _upload(file, "seeds.jsonl")},
        )

    def seed_domains(self) -> list[JSON]:
        return self._t.call("GET", "/api/seed-domains/")

    def import_abc_eval(
        self,
        slug: str,
        name: str,
        conversations: Upload,
        behaviours: Upload,
        *,
        likert: Upload | None = None,
        comparative: Upload | None = None,
    ) -> JSON:
        """The published ABC-Eval study's files, as a study of its own."""
        files = {
            "conversations": _upload(conversations, "conversations.json"),
            "behaviours": _upload(behaviours, "behaviours.json"),
        }
        if likert is not None:
            files["likert"] = _upload(likert, "likert.json")
        if comparative is not None:
            files["comparative"] = _upload(comparative, "comparative.json")
        return self._t.call(
            "POST",
            "/api/studies/abc-eval/",
            data=_form({"slug": slug, "name": name}),
            files=files,
        )


class Campaigns(_Group):
    def list(self, **filters: Any) -> Paginated[m.Campaign]:
        """Filters: search, ordering, status, task_kind, provider."""
        return self._t.paginate("/api/campaigns/", params=filters, item=lambda r: m.Campaign(**r))

    def get(self, slug: str) -> m.CampaignDetail:
        return m.CampaignDetail(**self._t.call("GET", "/api/campaigns/{slug}/", {"slug": slug}))

    def create(
        self,
        *,
        conversations: Upload | None = None,
        gold_items: Upload | None = None,
        **fields: Any,
    ) -> JSON:
        """A draft campaign you own: the campaign form's fields (A/B: prompt_set, system,
        baselines); the other kinds from a `conversations` file (and `gold_items`)."""
        if conversations is None and gold_items is None:
            return self._t.call("POST", "/api/campaigns/", json=fields)
        files = {}
        if conversations is not None:
            files["conversations"] = _upload(conversations, "conversations.jsonl")
        if gold_items is not None:
            files["gold_items"] = _upload(gold_items, "gold.jsonl")
        form = _form({k: json.dumps(v) if isinstance(v, dict) else v for k, v in fields.items()})
        return self._t.call("POST", "/api/campaigns/", data=form, files=files)

    def progress(self, slug: str) -> m.Progress:
        return m.Progress(**self._t.call("GET", "/api/campaigns/{slug}/progress/", {"slug": slug}))

    def launch(self, slug: str, *, confirm: bool = False) -> m.CampaignDetail:
        answer = self._t.call(
            "POST", "/api/campaigns/{slug}/launch/", {"slug": slug}, json={"confirm": confirm}
        )
        return m.CampaignDetail(**answer)

    def pause(self, slug: str) -> m.CampaignDetail:
        answer = self._t.call("POST", "/api/campaigns/{slug}/pause/", {"slug": slug}, json={})
        return m.CampaignDetail(**answer)

    def finish(self, slug: str) -> m.CampaignDetail:
        answer = self._t.call("POST", "/api/campaigns/{slug}/finish/", {"slug": slug}, json={})
        return m.CampaignDetail(**answer)

    def items(self, slug: str, **filters: Any) -> Paginated[JSON]:
        """Filters: role, batch, search, ordering."""
        return self._t.paginate(
            "/api/campaigns/{slug}/items/", {"slug": slug}, params=filters, item=dict
        )

    def item(self, slug: str, position: int) -> JSON:
        return self._t.call(
            "GET", "/api/campaigns/{slug}/items/{position}/", {"slug": slug, "position": position}
        )

    def preview(self, slug: str, position: int, answer: Mapping[str, Any]) -> JSON:
        """Checks an answer (the task's form fields) as a worker's would be; stores nothing."""
        return self._t.call(
            "POST",
            "/api/campaigns/{slug}/items/{position}/preview/",
            {"slug": slug, "position": position},
            data=_form(answer),
        )

    def judgments(self, slug: str, **filters: Any) -> Paginated[m.Judgment]:
        """Filters: worker, item, gold_correct, submitted_after, submitted_before, ordering."""
        return self._t.paginate(
            "/api/judgments/",
            params={"campaign": slug, **filters},
            item=lambda r: m.Judgment(**r),
        )

    def judgment(self, judgment_id: int) -> m.Judgment:
        return m.Judgment(**self._t.call("GET", "/api/judgments/{id}/", {"id": judgment_id}))

    def export(self, slug: str, to: IO[bytes], *, format: str = "csv") -> int:
        """Every judgment, streamed into the binary file `to` (format csv or jsonl); the
        bytes written."""
        if format == "csv":
            return self._t.download("/api/campaigns/{slug}/export/csv/", {"slug": slug}, to=to)
        if format == "jsonl":
            return self._t.download("/api/campaigns/{slug}/export/jsonl/", {"slug": slug}, to=to)
        raise ValueError(f"format is csv or jsonl, not {format!r}")

    def dataset(
        self, slug: str, to: IO[bytes], *, license: str | None = None, citation: str | None = None
    ) -> int:
        """Every judgment as a Hugging Face dataset (a zip of Parquet and its card)."""
        return self._t.download(
            "/api/campaigns/{slug}/export/dataset/",
            {"slug": slug},
            params=_card(license, citation),
            to=to,
        )

    def workers(self, slug: str, **filters: Any) -> Paginated[JSON]:
        """The worker quality table (`sort`, e.g. "-gold")."""
        return self._t.paginate(
            "/api/campaigns/{slug}/workers/", {"slug": slug}, params=filters, item=dict
        )

    def plan(self, slug: str, **parameters: Any) -> JSON:
        """The budget planner (systems and spread_elo, or pilot=True; tie_rate, level...)."""
        return self._t.call("GET", "/api/campaigns/{slug}/plan/", {"slug": slug}, params=parameters)

    def stopping(self, slug: str) -> JSON:
        return self._t.call("GET", "/api/campaigns/{slug}/stopping/", {"slug": slug})

    def launch_request(self, slug: str) -> m.LaunchRequest:
        """The campaign's latest launch request."""
        answer = self._t.call("GET", "/api/campaigns/{slug}/launch-request/", {"slug": slug})
        return m.LaunchRequest(**answer)

    def request_launch(
        self, slug: str, provider: str, *, sandbox: bool | None = None
    ) -> m.LaunchRequest:
        """Asks staff to approve a paid launch on a crowd platform."""
        answer = self._t.call(
            "POST",
            "/api/campaigns/{slug}/launch-request/",
            {"slug": slug},
            json=_fields(provider=provider, sandbox=sandbox),
        )
        return m.LaunchRequest(**answer)

    def decide_launch(self, slug: str, *, approve: bool, reason: str = "") -> m.LaunchRequest:
        """Staff: approve (which launches) or decline with a reason."""
        answer = self._t.call(
            "POST",
            "/api/campaigns/{slug}/launch-request/decision/",
            {"slug": slug},
            json={"approve": approve, "reason": reason},
        )
        return m.LaunchRequest(**answer)


class Crowd(_Group):
    """A campaign on a crowd platform (Prolific, Mechanical Turk)."""

    def estimate(self, campaign: str) -> JSON:
        return self._t.call("GET", "/api/campaigns/{slug}/crowd/estimate/", {"slug": campaign})

    def launch(
        self,
        campaign: str,
        *,
        provider: str | None = None,
        sandbox: bool | None = None,
        confirm: bool = False,
    ) -> JSON:
        return self._t.call(
            "POST",
            "/api/campaigns/{slug}/crowd/launch/",
            {"slug": campaign},
            json=_fields(provider=provider, sandbox=sandbox, confirm=confirm),
        )

    def sync(self, campaign: str) -> JSON:
        return self._t.call("POST", "/api/campaigns/{slug}/crowd/sync/", {"slug": campaign})

    def pay(self, campaign: str, *, confirm: bool = False) -> JSON:
        return self._t.call(
            "POST",
            "/api/campaigns/{slug}/crowd/pay/",
            {"slug": campaign},
            json={"confirm": confirm},
        )

    def finish(self, campaign: str) -> JSON:
        return self._t.call("POST", "/api/campaigns/{slug}/crowd/finish/", {"slug": campaign})

    def review(self, campaign: str) -> list[JSON]:
        return self._t.call("GET", "/api/campaigns/{slug}/crowd/review/", {"slug": campaign})

    def decide(
        self,
        campaign: str,
        action: str,
        assignments: Iterable[str],
        *,
        reason: str | None = None,
        amount: str | None = None,
        key: str | None = None,
    ) -> JSON:
        """approve, reject, bonus or block the assignments given."""
        body = _fields(
            action=action, assignments=list(assignments), reason=reason, amount=amount, key=key
        )
        return self._t.call(
            "POST", "/api/campaigns/{slug}/crowd/review/", {"slug": campaign}, json=body
        )


class Tournaments(_Group):
    def list(self, **filters: Any) -> Paginated[m.Tournament]:
        """Filters: search, ordering, kind, status, published."""
        return self._t.paginate(
            "/api/tournaments/", params=filters, item=lambda r: m.Tournament(**r)
        )

    def get(self, slug: str) -> m.Tournament:
        return m.Tournament(**self._t.call("GET", "/api/tournaments/{slug}/", {"slug": slug}))

    def create(self, slug: str, name: str, kind: str, **fields: Any) -> m.Tournament:
        body = {"slug": slug, "name": name, "kind": kind, **fields}
        return m.Tournament(**self._t.call("POST", "/api/tournaments/", json=body))

    def progress(self, slug: str) -> JSON:
        return self._t.call("GET", "/api/tournaments/{slug}/progress/", {"slug": slug})

    def collect(self, slug: str) -> JSON:
        """Starts collecting conversations from the systems' endpoints."""
        return self._t.call("POST", "/api/tournaments/{slug}/collect/", {"slug": slug})

    def generate(self, slug: str) -> JSON:
        """Generates the tournament's campaign."""
        return self._t.call("POST", "/api/tournaments/{slug}/generate/", {"slug": slug})

    def launch(self, slug: str) -> JSON:
        return self._t.call("POST", "/api/tournaments/{slug}/launch/", {"slug": slug})

    def results(self, slug: str) -> JSON:
        """The latest results (the leaderboard): ranking, pairwise, survival... with the
        run's provenance."""
        return self._t.call("GET", "/api/tournaments/{slug}/results/", {"slug": slug})

    def analysis_settings(self, slug: str) -> JSON:
        return self._t.call("GET", "/api/tournaments/{slug}/analyses/", {"slug": slug})

    def analyse(self, slug: str, **parameters: Any) -> JSON:
        """The matching analysis run, or a new one queued."""
        return self._t.call(
            "POST", "/api/tournaments/{slug}/analyses/", {"slug": slug}, json=parameters
        )

    def dataset(
        self, slug: str, to: IO[bytes], *, license: str | None = None, citation: str | None = None
    ) -> int:
        """Conversations and judgments as a Hugging Face dataset (zipped Parquet, card)."""
        return self._t.download(
            "/api/tournaments/{slug}/dataset/",
            {"slug": slug},
            params=_card(license, citation),
            to=to,
        )


class Analyses(_Group):
    FINAL = frozenset({"succeeded", "failed"})

    def list(self, **filters: Any) -> Paginated[m.AnalysisRun]:
        """Filters: tournament, campaign, status."""
        return self._t.paginate(
            "/api/analysis-runs/", params=filters, item=lambda r: m.AnalysisRun(**r)
        )

    def get(self, run_id: int) -> m.AnalysisRunDetail:
        answer = self._t.call("GET", "/api/analysis-runs/{id}/", {"id": run_id})
        return m.AnalysisRunDetail(**answer)

    def request(
        self, tournament: str, parameters: Mapping[str, Any] | None = None
    ) -> m.AnalysisRun:
        """The matching run, or a new one queued."""
        body = _fields(tournament=tournament, parameters=dict(parameters) if parameters else None)
        return m.AnalysisRun(**self._t.call("POST", "/api/analysis-runs/", json=body))

    def wait(
        self, run_id: int, *, timeout: float = 600, interval: float = 2
    ) -> m.AnalysisRunDetail:
        return _poll(
            lambda: self.get(run_id),
            lambda r: r.status in self.FINAL,
            timeout=timeout,
            interval=interval,
        )

    def dataset(
        self, run_id: int, to: IO[bytes], *, license: str | None = None, citation: str | None = None
    ) -> int:
        """The run's results as a Hugging Face dataset (zipped Parquet, card)."""
        return self._t.download(
            "/api/analysis-runs/{id}/dataset/",
            {"id": run_id},
            params=_card(license, citation),
            to=to,
        )


class Arenas(_Group):
    def leaderboard(
        self, slug: str, *, category: str | None = None, style_control: bool | None = None
    ) -> JSON:
        """The arena's leaderboard (`pending` while it is being computed)."""
        return self._t.call(
            "GET",
            "/api/arenas/{slug}/leaderboard/",
            {"slug": slug},
            params={"category": category, "style_control": style_control},
        )

    def plan(self, slug: str, **parameters: Any) -> JSON:
        return self._t.call("GET", "/api/arenas/{slug}/plan/", {"slug": slug}, params=parameters)

    def stopping(self, slug: str) -> JSON:
        return self._t.call("GET", "/api/arenas/{slug}/stopping/", {"slug": slug})

    def flags(self, slug: str) -> Paginated[JSON]:
        return self._t.paginate("/api/arenas/{slug}/flags/", {"slug": slug}, item=dict)

    def review_flag(self, slug: str, public_id: str, *, code: str, decision: str) -> JSON:
        return self._t.call(
            "POST",
            "/api/arenas/{slug}/flags/{public_id}/",
            {"slug": slug, "public_id": public_id},
            json={"code": code, "decision": decision},
        )

    def moderation(self, slug: str) -> JSON:
        return self._t.call("GET", "/api/arenas/{slug}/moderation/", {"slug": slug})

    def update_moderation(self, slug: str, **fields: Any) -> JSON:
        return self._t.call("PATCH", "/api/arenas/{slug}/moderation/", {"slug": slug}, json=fields)

    def export_battles(self, slug: str, to: IO[bytes], *, format: str = "jsonl") -> int:
        """The arena's battles in Chatbot Arena's clean-battle format (json or jsonl)."""
        return self._t.download(
            "/api/arenas/{slug}/battles/export/", {"slug": slug}, params={"format": format}, to=to
        )

    def battles_dataset(
        self, slug: str, to: IO[bytes], *, license: str | None = None, citation: str | None = None
    ) -> int:
        """The arena's battles as a Hugging Face dataset (a zip of Parquet and its card)."""
        return self._t.download(
            "/api/arenas/{slug}/battles/export/dataset/",
            {"slug": slug},
            params=_card(license, citation),
            to=to,
        )

    def import_battles(self, slug: str, file: Upload, *, create: bool = False) -> JSON:
        return self._t.call(
            "POST",
            "/api/arenas/{slug}/battles/import/",
            {"slug": slug},
            data=_form({"create": create}),
            files={"file": _upload(file, "battles.jsonl")},
        )


class Judges(_Group):
    def list(self, **filters: Any) -> Paginated[m.Judge]:
        return self._t.paginate("/api/judges/", params=filters, item=lambda r: m.Judge(**r))

    def get(self, slug: str) -> m.Judge:
        return m.Judge(**self._t.call("GET", "/api/judges/{slug}/", {"slug": slug}))

    def create(self, slug: str, name: str, endpoint: Mapping[str, Any]) -> m.Judge:
        """A judge with its own OpenAI-compatible endpoint: `endpoint` holds at least
        `url` and `model_name` (and `auth_token`, limits); no system is made for it."""
        body = {"slug": slug, "name": name, "endpoint": dict(endpoint)}
        return m.Judge(**self._t.call("POST", "/api/judges/", json=body))


class Rubrics(_Group):
    def list(self, **filters: Any) -> Paginated[m.Rubric]:
        return self._t.paginate("/api/judge-rubrics/", params=filters, item=lambda r: m.Rubric(**r))

    def get(self, rubric_id: int) -> m.Rubric:
        return m.Rubric(**self._t.call("GET", "/api/judge-rubrics/{id}/", {"id": rubric_id}))

    def create(self, task_kind: str, name: str, instructions: str) -> m.Rubric:
        body = {"task_kind": task_kind, "name": name, "instructions": instructions}
        return m.Rubric(**self._t.call("POST", "/api/judge-rubrics/", json=body))

    def revise(self, rubric_id: int, instructions: str) -> m.Rubric:
        """The rubric with new instructions: changed in place while no run used it, else
        its next version (a new id)."""
        answer = self._t.call(
            "POST",
            "/api/judge-rubrics/{id}/revise/",
            {"id": rubric_id},
            json={"instructions": instructions},
        )
        return m.Rubric(**answer)


class JudgeRuns(_Group):
    FINAL = frozenset({"done", "failed"})

    def list(self, **filters: Any) -> Paginated[m.JudgeRun]:
        return self._t.paginate("/api/judge-runs/", params=filters, item=lambda r: m.JudgeRun(**r))

    def get(self, run_id: int) -> m.JudgeRun:
        return m.JudgeRun(**self._t.call("GET", "/api/judge-runs/{id}/", {"id": run_id}))

    def create(self, judge: str, rubric: int, **fields: Any) -> m.JudgeRun:
        """A judge over a campaign (`campaign=`) or an arena's battles (`arena=`)."""
        body = {"judge": judge, "rubric": rubric, **fields}
        return m.JudgeRun(**self._t.call("POST", "/api/judge-runs/", json=body))

    def progress(self, run_id: int) -> m.JudgeRunProgress:
        answer = self._t.call("GET", "/api/judge-runs/{id}/progress/", {"id": run_id})
        return m.JudgeRunProgress(**answer)

    def pause(self, run_id: int) -> m.JudgeRun:
        return m.JudgeRun(**self._t.call("POST", "/api/judge-runs/{id}/pause/", {"id": run_id}))

    def resume(self, run_id: int) -> m.JudgeRun:
        return m.JudgeRun(**self._t.call("POST", "/api/judge-runs/{id}/resume/", {"id": run_id}))

    def judgments(self, run_id: int, **filters: Any) -> Paginated[JSON]:
        return self._t.paginate(
            "/api/judge-runs/{id}/judgments/", {"id": run_id}, params=filters, item=dict
        )

    def human_vs_automatic(self, run_id: int) -> JSON:
        """How far the judge agrees with the crowd (the latest comparison)."""
        return self._t.call("GET", "/api/judge-runs/{id}/human-vs-automatic/", {"id": run_id})

    def compare(self, run_id: int, parameters: Mapping[str, Any] | None = None) -> JSON:
        """Requests the human-versus-automatic comparison (the matching one, or queued)."""
        return self._t.call(
            "POST",
            "/api/judge-runs/{id}/human-vs-automatic/",
            {"id": run_id},
            json=_fields(parameters=dict(parameters) if parameters else None),
        )

    def dataset(
        self, run_id: int, to: IO[bytes], *, license: str | None = None, citation: str | None = None
    ) -> int:
        """The run's automatic judgments as a Hugging Face dataset (zipped Parquet, card)."""
        return self._t.download(
            "/api/judge-runs/{id}/dataset/", {"id": run_id}, params=_card(license, citation), to=to
        )


class Webhooks(_Group):
    """The account's webhook subscriptions (docs/webhooks.md), by their public id."""

    def list(self) -> Paginated[JSON]:
        return self._t.paginate("/api/webhooks/", item=dict)

    def get(self, public_id: str) -> JSON:
        return self._t.call("GET", "/api/webhooks/{public_id}/", {"public_id": public_id})

    def create(self, url: str, events: Iterable[str], description: str = "") -> JSON:
        """The new subscription, with its `secret` (whsec_...): shown this once only."""
        body = {"url": url, "events": list(events), "description": description}
        return self._t.call("POST", "/api/webhooks/", json=body)

    def delete(self, public_id: str) -> None:
        self._t.call("DELETE", "/api/webhooks/{public_id}/", {"public_id": public_id})

    def deliveries(self, public_id: str, **filters: Any) -> Paginated[JSON]:
        return self._t.paginate(
            "/api/webhooks/{public_id}/deliveries/",
            {"public_id": public_id},
            params=filters,
            item=dict,
        )

    def test(self, public_id: str) -> JSON:
        """Sends a signed test event now; the delivery queued."""
        return self._t.call("POST", "/api/webhooks/{public_id}/test/", {"public_id": public_id})


class PartnerSets(_Group):
    def list(self) -> list[JSON]:
        return self._t.call("GET", "/api/partner-sets/")

    def create(self, slug: str, name: str, systems: Iterable[str], **fields: Any) -> JSON:
        body = {"slug": slug, "name": name, "systems": list(systems), **fields}
        return self._t.call("POST", "/api/partner-sets/", json=body)


class EvalHub:
    """A client of one EvalHub server.

    `url` and `token` default to EVALHUB_URL and EVALHUB_TOKEN, then to the config file
    `evalhub login` writes (evalhub_client.config); `token=""` sends none (signed out). Use it as a context manager, or call
    `close()`, to release its connections.
    """

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        retries: int = 3,
        backoff: float = 0.5,
        http: httpx.Client | None = None,
    ):
        settings = resolve(url, token)
        self.url = settings.url.rstrip("/")
        self.transport = Transport(
            self.url, settings.token, timeout=timeout, retries=retries, backoff=backoff, http=http
        )
        t = self.transport
        self.tokens = Tokens(t)
        self.systems = Systems(t)
        self.submissions = Submissions(t)
        self.endpoints = Endpoints(t)
        self.model_endpoints = ModelEndpoints(t)
        self.prompt_sets = PromptSets(t)
        self.conversations = Conversations(t)
        self.campaigns = Campaigns(t)
        self.crowd = Crowd(t)
        self.tournaments = Tournaments(t)
        self.analyses = Analyses(t)
        self.arenas = Arenas(t)
        self.judges = Judges(t)
        self.rubrics = Rubrics(t)
        self.judge_runs = JudgeRuns(t)
        self.partner_sets = PartnerSets(t)
        self.webhooks = Webhooks(t)

    def close(self) -> None:
        self.transport.close()

    def __enter__(self) -> EvalHub:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["EvalHub", "EvalHubError", "LEFT_OUT", "Paginated"]
