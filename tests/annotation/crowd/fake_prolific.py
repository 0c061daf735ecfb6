"""A local stand-in for Prolific's API on 127.0.0.1: the endpoints EvalHub uses, with
Prolific's error shape for validation errors, pagination (20 per page by default), and
scripted 429s and 5xx."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

PREFIX = "/api/v1/"
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
        status, payload = self.route(method, parts, query, body)
        return status, payload, {}

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

    def transition_submission(self, submission_id, body):
        row = next(
            (r for rows in self.submissions.values() for r in rows if r["id"] == submission_id),
            None,
        )
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
