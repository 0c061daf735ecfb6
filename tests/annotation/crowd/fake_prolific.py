"""A local stand-in for Prolific's API on 127.0.0.1: the endpoints EvalHub uses, with
Prolific's error shape for validation errors, pagination (20 per page by default), and
scripted 429s and 5xx; and Prolific's hooks: subscriptions (made, then confirmed with the
X-Hook-Secret of their creation) and `submission.status.change` events POSTed to the
subscribed URL, signed as Prolific signs them."""

import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import httpx

PREFIX = "/api/v1/"
HOOK_EVENTS = ("study.status.change", "submission.status.change")
REQUIRED_STUDY_FIELDS = (
    "name",
    "description",
    "external_study_url",
    "completion_codes",
    "total_available_places",
    "estimated_completion_time",
    "reward",
)


def validation_error(detail: dict) -> tuple[int, dict]:
    return 400, {
        "error": {
            "status": 400,
            "error_code": 140001,
            "title": "Request validation failed",
            "detail": detail,
            "additional_information": "/api/v1/errors/140001",
            "traceback": None,
            "interactive": False,
        }
    }


class FakeProlific:
    def __init__(self):
        self.requests: list[dict] = []
        self.studies: dict[str, dict] = {}
        self.submissions: dict[str, list[dict]] = {}
        self.groups: dict[str, set] = {}
        self.bonuses: dict[str, dict] = {}
        self.paid: list[str] = []
        self.messages: list[dict] = []
        self.failures: list[tuple[str, str, int, dict]] = []
        self.hook_secrets: dict[str, str] = {}  # workspace id: its secret
        self.subscriptions: dict[str, dict] = {}
        # Where a hook really goes: {"https://public.example": "http://127.0.0.1:port"},
        # the proxy in front of the app that a test cannot have.
        self.forward: dict[str, str] = {}
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_port}{PREFIX}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    def fail(self, method: str, path: str, status: int, times: int = 1, headers=None):
        """The next `times` requests to `path` (under /api/v1/) answer `status`."""
        for _ in range(times):
            self.failures.append((method, path, status, headers or {}))

    def add_submissions(self, study_id: str, rows: list[dict]) -> None:
        self.submissions.setdefault(study_id, []).extend(rows)

    def emit(self, submission_id: str, status: str, **delivery) -> list[httpx.Response]:
        """The submission takes `status` (Prolific's spelling, "APPROVED", "RETURNED"), and
        every confirmed subscription to its changes receives the event; their answers."""
        row = self._submission(submission_id)
        row["status"] = status
        event = {
            "resource_id": submission_id,
            "event_type": "submission.status.change",
            "participant_id": row["participant_id"],
            "status": status,
        }
        return [
            self.deliver(subscription, event, **delivery)
            for subscription in self.subscriptions.values()
            if subscription["event_type"] == event["event_type"] and subscription["is_enabled"]
        ]

    def deliver(
        self, subscription: dict, event: dict, *, secret=None, timestamp=None, signature=None
    ) -> httpx.Response:
        """POST the event to the subscription's URL as Prolific does: the raw JSON body, its
        UNIX timestamp, and the base64 HMAC-SHA256 of timestamp + body under the workspace's
        secret (each overridable, to forge a request)."""
        body = json.dumps(event).encode()
        stamp = str(int(time.time())) if timestamp is None else str(timestamp)
        key = secret if secret is not None else self.hook_secrets[subscription["workspace_id"]]
        digest = hmac.new(key.encode(), stamp.encode() + body, hashlib.sha256).digest()
        url = subscription["target_url"]
        for public, local in self.forward.items():
            if url.startswith(public):
                url = local + url[len(public) :]
        return httpx.post(
            url,
            content=body,
            headers={
                "Content-Type": "application/json",
                "X-Prolific-Request-Timestamp": stamp,
                "X-Prolific-Request-Signature": signature or base64.b64encode(digest).decode(),
            },
            timeout=30,
        )

    def calls(self, method=None, path=None) -> list[dict]:
        return [
            r
            for r in self.requests
            if (method is None or r["method"] == method) and (path is None or r["path"] == path)
        ]

    # -- the endpoints ---------------------------------------------------------------------

    def answer(self, method, path, query, body):
        for n, (m, p, status, headers) in enumerate(self.failures):
            if m == method and p == path:
                del self.failures[n]
                return status, {"error": {"status": status, "title": "Busy"}}, headers
        parts = path.strip("/").split("/")
        answer = self.route(method, parts, query, body)
        return answer if len(answer) == 3 else (*answer, {})

    def route(self, method, parts, query, body):
        if parts == ["studies"] and method == "POST":
            return self.create_study(body)
        if len(parts) == 3 and parts[0] == "studies" and parts[2] == "transition":
            return self.transition_study(parts[1], body)
        if parts == ["submissions"] and method == "GET":
            return self.list_submissions(query)
        if len(parts) == 3 and parts[0] == "submissions" and parts[2] == "transition":
            return self.transition_submission(parts[1], body)
        if parts == ["submissions", "bonus-payments"] and method == "POST":
            return self.setup_bonus(body)
        if len(parts) == 3 and parts[0] == "bulk-bonus-payments" and parts[2] == "pay":
            self.paid.append(parts[1])
            return 202, {}
        if parts == ["participant-groups"] and method == "POST":
            group_id = f"group{len(self.groups) + 1}"
            self.groups[group_id] = set()
            return 201, {"id": group_id, "name": body.get("name")}
        if len(parts) == 3 and parts[0] == "participant-groups" and parts[2] == "participants":
            members = self.groups[parts[1]]
            ids = set(body.get("participant_ids", []))
            if method == "POST":
                members |= ids
            else:
                members -= ids
            return 200, {"results": [{"participant_id": p} for p in sorted(members)]}
        if parts == ["hooks", "subscriptions"] and method == "GET":
            workspace = query.get("workspace_id", [""])[0]
            rows = [s for s in self.subscriptions.values() if s["workspace_id"] == workspace]
            return 200, {"results": rows, "_links": {"next": {"href": None}}}
        if parts == ["hooks", "subscriptions"] and method == "POST":
            return self.subscribe(body)
        if len(parts) == 3 and parts[:2] == ["hooks", "subscriptions"] and method == "POST":
            return self.confirm(parts[2], body)
        if parts == ["messages"] and method == "POST":
            self.messages.append(body)
            return 201, {}
        return 404, {"error": {"status": 404, "title": "Not found", "detail": "/".join(parts)}}

    def create_study(self, body):
        missing = {f: ["This field is required."] for f in REQUIRED_STUDY_FIELDS if f not in body}
        if missing:
            return validation_error(missing)
        for field in ("reward", "total_available_places", "estimated_completion_time"):
            if not isinstance(body[field], int) or body[field] < 1:
                return validation_error(
                    {field: ["Ensure this value is greater than or equal to 1."]}
                )
        url = body["external_study_url"]
        if not url.startswith("https://"):
            return validation_error({"external_study_url": ["Enter a valid URL."]})
        study_id = f"study{len(self.studies) + 1}"
        self.studies[study_id] = {**body, "id": study_id, "status": "UNPUBLISHED"}
        return 201, self.studies[study_id]

    def transition_study(self, study_id, body):
        study = self.studies.get(study_id)
        if study is None:
            return 404, {"error": {"status": 404, "title": "Not found"}}
        allowed = {
            "PUBLISH": ("UNPUBLISHED",),
            "PAUSE": ("ACTIVE",),
            "START": ("PAUSED",),
            "STOP": ("ACTIVE", "PAUSED"),
        }
        action = body.get("action")
        if study["status"] not in allowed.get(action, ()):
            return validation_error(
                {"action": [f"Cannot {action} a study that is {study['status']}."]}
            )
        study["status"] = {
            "PUBLISH": "ACTIVE",
            "PAUSE": "PAUSED",
            "START": "ACTIVE",
            "STOP": "COMPLETED",
        }[action]
        return 200, study

    def list_submissions(self, query):
        rows = self.submissions.get(query.get("study", [""])[0], [])
        size = int(query.get("page_size", ["20"])[0])
        page = int(query.get("page", ["1"])[0])
        chunk = rows[(page - 1) * size : page * size]
        more = page * size < len(rows)
        study = query.get("study", [""])[0]
        following = f"{self.url}submissions/?study={study}&page={page + 1}" if more else None
        return 200, {
            "results": chunk,
            "_links": {"next": {"href": following, "title": "Next"}},
            "meta": {"count": len(rows)},
        }

    def subscribe(self, body):
        problems = {}
        if body.get("event_type") not in HOOK_EVENTS:
            problems["event_type"] = [f"Not one of {', '.join(HOOK_EVENTS)}."]
        if not str(body.get("target_url", "")).startswith("https://"):
            problems["target_url"] = ["The target URL must use https://."]
        if body.get("workspace_id") not in self.hook_secrets:
            problems["workspace_id"] = ["This workspace has no secret: create one first."]
        if problems:
            return validation_error(problems)
        subscription_id = f"hook{len(self.subscriptions) + 1}"
        self.subscriptions[subscription_id] = {
            "id": subscription_id,
            "event_type": body["event_type"],
            "target_url": body["target_url"],
            "workspace_id": body["workspace_id"],
            "is_enabled": False,
            "confirmation": secrets.token_hex(16),
        }
        shown = {
            k: v for k, v in self.subscriptions[subscription_id].items() if k != "confirmation"
        }
        return 201, shown, {"X-Hook-Secret": self.subscriptions[subscription_id]["confirmation"]}

    def confirm(self, subscription_id, body):
        subscription = self.subscriptions.get(subscription_id)
        if subscription is None:
            return 404, {"error": {"status": 404, "title": "Not found"}}
        if body.get("secret") != subscription["confirmation"]:
            return validation_error({"secret": ["Does not match the X-Hook-Secret."]})
        subscription["is_enabled"] = True
        return 200, {k: v for k, v in subscription.items() if k != "confirmation"}

    def _submission(self, submission_id):
        return next(
            (r for rows in self.submissions.values() for r in rows if r["id"] == submission_id),
            None,
        )

    def transition_submission(self, submission_id, body):
        row = self._submission(submission_id)
        if row is None:
            return 404, {"error": {"status": 404, "title": "Not found"}}
        action = body.get("action")
        if action == "REJECT":
            problems = {}
            if len(body.get("message", "")) < 100:
                problems["message"] = ["Ensure this field has at least 100 characters."]
            if not body.get("rejection_category"):
                problems["rejection_category"] = ["This field is required."]
            if problems:
                return validation_error(problems)
        if row["status"] != "AWAITING REVIEW":
            return validation_error({"action": [f"Submission is {row['status']}."]})
        row["status"] = {"APPROVE": "APPROVED", "REJECT": "REJECTED"}[action]
        return 200, row

    def setup_bonus(self, body):
        lines = [line for line in body.get("csv_bonuses", "").splitlines() if line]
        known = {r["participant_id"] for r in self.submissions.get(body.get("study_id"), [])}
        unknown = [line.split(",")[0] for line in lines if line.split(",")[0] not in known]
        if unknown:
            return validation_error({"csv_bonuses": [f"Unknown participant ids: {unknown}"]})
        bonus_id = f"bonus{len(self.bonuses) + 1}"
        total = sum(float(line.split(",")[1]) for line in lines)
        self.bonuses[bonus_id] = {"id": bonus_id, "study": body["study_id"], "amount": total * 100}
        return 201, self.bonuses[bonus_id]

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _serve(self):
                split = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else {}
                path = split.path[len(PREFIX) :] if split.path.startswith(PREFIX) else split.path
                query = parse_qs(split.query)
                with fake.lock:
                    fake.requests.append(
                        {
                            "method": self.command,
                            "path": path,
                            "query": {k: v[0] for k, v in query.items()},
                            "json": body,
                            "authorization": self.headers.get("Authorization"),
                        }
                    )
                    if self.headers.get("Authorization") != "Token sekrit":
                        status, payload, headers = (
                            401,
                            {"error": {"status": 401, "title": "Unauthorized"}},
                            {},
                        )
                    else:
                        status, payload, headers = fake.answer(self.command, path, query, body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = _serve

        return Handler
