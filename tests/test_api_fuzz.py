"""The REST API under fuzzing (schemathesis): every operation of /api/schema/, called
in-process as a researcher and as staff with generated valid and invalid input (both
generation modes), answers without a server error, in the content type and the body shape
its schema declares; every 4xx answers the one error shape (evalhub/api/exceptions.py).

Slow (a few minutes per role): it runs only when EVALHUB_RUN_FUZZ is set, as .ci/run does
in its PostgreSQL stage (time zones and other inputs SQLite accepts fail only there).
Generated strings hold NUL characters too (schemathesis's default): the API refuses them with
a 400 in the one error shape on every database (evalhub/nul_refusal.py,
evalhub/api/parsers.py), so nothing here treats them apart. The number of examples per
operation is EVALHUB_FUZZ_EXAMPLES (default 20; about five minutes a role), so the run time
stays bounded as the API grows. The API's throttles are at the tests' rates
(tests/conftest.py), out of reach, so every call reaches its view.
"""

import itertools
import os
import socket

import pytest
from django.db import DatabaseError, transaction
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable

from tests import factories

RUN = os.environ.get("EVALHUB_RUN_FUZZ", "").lower() in ("1", "true", "yes")
EXAMPLES = int(os.environ.get("EVALHUB_FUZZ_EXAMPLES", "20"))

SLOW = pytest.mark.skipif(not RUN, reason="API fuzzing is slow: set EVALHUB_RUN_FUZZ=1 (CI does)")


def error_shape_problems(body) -> list[str]:
    """What is wrong with an error body against the one shape: {"errors": [{"message", and
    one locator "field" or "line" ("file" may go with a line)}], "error_count": n >= len}."""
    if not isinstance(body, dict) or set(body) != {"errors", "error_count"}:
        return [f"not {{errors, error_count}}: {body!r}"[:300]]
    errors, count = body["errors"], body["error_count"]
    problems = []
    if not isinstance(errors, list) or not errors:
        problems.append("errors is not a non-empty list")
        errors = []
    if not isinstance(count, int) or count < len(errors):
        problems.append(f"error_count {count!r} is less than the {len(errors)} errors")
    for error in errors:
        locators = {"field", "line"} & set(error) if isinstance(error, dict) else set()
        if not isinstance(error, dict) or len(locators) != 1:
            problems.append(f"an error without exactly one of field and line: {error!r}")
        elif set(error) - {"field", "line", "file", "message"}:
            problems.append(f"an error with other keys: {error!r}")
        elif not isinstance(error.get("message"), str) or not error["message"]:
            problems.append(f"an error without a message: {error!r}")
    return problems


def test_the_shape_check_accepts_the_one_shape_and_refuses_drf_s_own():
    assert (
        error_shape_problems(
            {"errors": [{"line": None, "message": "Not found."}], "error_count": 1}
        )
        == []
    )
    assert (
        error_shape_problems(
            {
                "errors": [
                    {"field": "slug", "message": "taken."},
                    {"line": 3, "file": "a.jsonl", "message": "empty."},
                ],
                "error_count": 40,
            }
        )
        == []
    )
    assert error_shape_problems({"detail": "Not found."})
    assert error_shape_problems({"errors": [{"message": "where?"}], "error_count": 1})
    assert error_shape_problems(
        {"errors": [{"field": "a", "line": 1, "message": "both"}], "error_count": 1}
    )
    assert error_shape_problems({"errors": [{"line": None, "message": "x"}], "error_count": 0})


if RUN:
    import schemathesis
    from schemathesis import GenerationMode
    from schemathesis.checks import (
        content_type_conformance,
        not_a_server_error,
        response_schema_conformance,
    )

    @schemathesis.check
    def one_error_shape(ctx, response, case):
        """Every 4xx, whatever raised it, answers the one error shape."""
        if 400 <= response.status_code < 500:
            try:
                body = response.json()
            except ValueError:
                raise AssertionError(
                    f"{response.status_code} with a body that is not JSON: "
                    f"{response.content[:200]!r} ({case.method} {case.formatted_path})"
                ) from None
            problems = error_shape_problems(body)
            assert not problems, f"{response.status_code}: " + "; ".join(problems)

    CHECKS = [
        not_a_server_error,
        response_schema_conformance,
        content_type_conformance,
        one_error_shape,
    ]

    @pytest.fixture
    def api_schema(db):
        from django.core import signals
        from django.db import close_old_connections

        from evalhub.wsgi import application

        # As Django's test client does: the WSGI handler would otherwise close the test's
        # database connection (and its transaction) after each request.
        signals.request_started.disconnect(close_old_connections)
        signals.request_finished.disconnect(close_old_connections)
        yield schemathesis.openapi.from_wsgi("/api/schema/", application)
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)

    LOOPBACK = {"127.0.0.1", "::1", "localhost", "testserver"}

    @pytest.fixture
    def only_this_machine(monkeypatch):
        """What the API does on the fuzzer's behalf (a generated bot endpoint called, a crowd
        platform asked, AWS's credentials looked up) reaches no host outside this machine: a
        name or address that is not loopback does not resolve, as for a host that is down."""
        resolve = socket.getaddrinfo

        def loopback_only(host, *args, **kwargs):
            name = host.decode() if isinstance(host, bytes) else str(host)
            if name not in LOOPBACK:
                raise socket.gaierror(socket.EAI_NONAME, f"tests reach no outside host ({name})")
            return resolve(host, *args, **kwargs)

        monkeypatch.setattr(socket, "getaddrinfo", loopback_only)
        monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")

    @pytest.fixture
    def fuzz_catalog(db):
        """A researcher with a system, a submission and a campaign of their own, so that
        operations on objects they may see get past their 404s (staff see them all)."""
        from tests.annotation.builders import ab_campaign

        user = factories.user("fuzz-researcher")
        prompt_set = factories.prompt_set(2, slug="fuzz-set")
        system = factories.system(user, slug="fuzz-bot", name="Fuzz Bot")
        factories.submission(system, prompt_set)
        ab_campaign(4, slug="fuzz-campaign", owner=user)
        return user

    def role_token(role: str, researcher) -> str:
        """A researcher sees what they own and the public; staff see and manage everything,
        so their calls reach the staff-only operations (imports, crowd, campaigns)."""
        user = researcher if role == "researcher" else factories.user("fuzz-staff", staff=True)
        return factories.api_token(user, "fuzzing")

    @pytest.mark.fuzz
    @SLOW
    @pytest.mark.parametrize("role", ["researcher", "staff"])
    def test_the_api_keeps_its_schema(api_schema, fuzz_catalog, only_this_machine, role):
        """Every operation in turn, as `role`; the failures of all of them are reported
        together."""
        headers = {"Authorization": f"Token {role_token(role, fuzz_catalog)}"}
        failures = {}
        operations = [result.ok() for result in api_schema.get_all_operations()]
        assert operations
        for operation, mode in itertools.product(operations, list(GenerationMode)):

            @given(case=operation.as_strategy(mode))
            @settings(
                max_examples=EXAMPLES,
                deadline=None,
                suppress_health_check=list(HealthCheck),
                derandomize=True,
                database=None,
            )
            def fuzz(case):
                # A savepoint per call: a request that breaks the transaction (a 500 on
                # PostgreSQL) is reported, and the next calls still have a database.
                try:
                    with transaction.atomic():
                        case.call_and_validate(headers=headers, checks=CHECKS)
                except DatabaseError:
                    pass  # the 500 it caused was already reported by the checks

            try:
                fuzz()
            except Unsatisfiable:
                # Negative mode finds no invalid value for some operations (a path of one
                # free-text slug): nothing to send, nothing wrong.
                assert mode == GenerationMode.NEGATIVE, operation.label
            except (Exception, BaseExceptionGroup) as failure:  # collected, then reported
                failures[f"{operation.label} ({mode.value})"] = str(failure)[:3000]
        report = "\n\n".join(f"{label}:\n{text}" for label, text in failures.items())
        assert not failures, f"{len(failures)} operations × modes failed:\n{report}"
