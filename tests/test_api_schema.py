"""The OpenAPI schema (drf-spectacular): every operation shows an example of what it takes
or answers, and the schema validates without a warning."""

import pytest
from django.core.management import call_command
from drf_spectacular.generators import SchemaGenerator

METHODS = {"get", "put", "patch", "post", "delete"}


def _has_example(content: dict) -> bool:
    return any("examples" in media or "example" in media for media in content.values())


def operations():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            if method in METHODS:
                yield f"{method.upper()} {path}", operation


def test_the_schema_lists_the_api():
    names = {name for name, _ in operations()}
    assert "POST /api/systems/{slug}/submissions/" in names
    assert "GET /api/tournaments/{slug}/results/" in names
    assert len(names) >= 50  # the check below is not vacuous


def test_every_operation_has_an_example():
    missing = []
    for name, operation in operations():
        request = operation.get("requestBody", {}).get("content", {})
        # Errors all refer to the one Error component (below); the answers are the 2xx.
        responses = [
            r.get("content", {})
            for status, r in operation.get("responses", {}).items()
            if status.startswith("2") or status == "400"
        ]
        if not request and not any(responses):
            continue  # nothing to show: e.g. a DELETE answered by an empty 204
        if not _has_example(request) and not any(_has_example(r) for r in responses):
            missing.append(name)
    assert missing == []


def test_an_upload_shows_its_answer_and_its_errors():
    operation = dict(operations())["POST /api/systems/{slug}/submissions/"]
    created = operation["responses"]["201"]["content"]["application/json"]["examples"]
    refused = operation["responses"]["400"]["content"]["application/json"]["examples"]
    [example] = created.values()
    assert example["value"]["metrics"]["n_empty"] == 2
    assert list(refused.values())[0]["value"]["error_count"] == 1


@pytest.mark.django_db
def test_the_schema_validates_without_warnings(tmp_path):
    target = tmp_path / "schema.yml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(target))
    assert "openapi:" in target.read_text()


def test_every_error_response_refers_to_the_one_error_component():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    error = schema["components"]["schemas"]["Error"]
    assert set(error["properties"]) == {"errors", "error_count"}
    statuses = set()
    for name, operation in operations():
        assert {"401", "403"} <= set(operation["responses"]), name
        for status, answer in operation["responses"].items():
            if status.startswith(("4", "5")):
                statuses.add(status)
                content = answer["content"]["application/json"]["schema"]
                assert content == {"$ref": "#/components/schemas/Error"}, (name, status)
    assert {"400", "401", "403", "404", "405", "415", "429"} <= statuses
