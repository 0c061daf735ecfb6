"""The client cannot drift from the API: every operation it calls is in the OpenAPI schema,
every operation of the schema has a client method (or is listed in LEFT_OUT with why), and
every field of its typed models is a property of the schema component it names."""

import ast
from pathlib import Path

import pytest
from drf_spectacular.generators import SchemaGenerator

import evalhub_client
from evalhub_client import client as client_module
from evalhub_client.models import MODELS

METHODS = {"get", "put", "patch", "post", "delete"}
# The Transport methods a resource method calls, and the HTTP method of those that imply one.
CALLS = {"call": None, "paginate": "GET", "download": "GET"}


@pytest.fixture(scope="module")
def schema():
    return SchemaGenerator().get_schema(request=None, public=True)


def schema_operations(schema) -> set[tuple[str, str]]:
    return {
        (method.upper(), path)
        for path, item in schema["paths"].items()
        for method in item
        if method in METHODS
    }


def client_operations(source: str) -> set[tuple[str, str]]:
    """(method, path) of every `self._t.call("METHOD", "/api/...")`, `paginate` and
    `download` in the client's source."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr not in CALLS:
            continue
        strings = [a.value for a in node.args if isinstance(a, ast.Constant)]
        strings = [s for s in strings if isinstance(s, str)]
        method = CALLS[node.func.attr]
        if method is None:
            method, *strings = strings
        path = next(s for s in strings if s.startswith("/api/"))
        found.add((method, path))
    return found


def source_of_the_client() -> str:
    return Path(client_module.__file__).read_text(encoding="utf-8")


def test_the_reader_finds_each_kind_of_call():
    source = """
def f(self):
    self._t.call("POST", "/api/systems/", json={})
    self._t.paginate("/api/systems/{slug}/submissions/", {"slug": s}, item=dict)
    self._t.download("/api/campaigns/{slug}/export/csv/", {"slug": s}, to=out)
"""
    assert client_operations(source) == {
        ("POST", "/api/systems/"),
        ("GET", "/api/systems/{slug}/submissions/"),
        ("GET", "/api/campaigns/{slug}/export/csv/"),
    }


def test_every_operation_the_client_calls_is_in_the_schema(schema):
    called = client_operations(source_of_the_client())

    assert len(called) >= 60  # the check below is not vacuous
    assert called - schema_operations(schema) == set()


def test_every_operation_of_the_schema_has_a_client_method(schema):
    called = client_operations(source_of_the_client())
    left_out = {tuple(name.split(" ", 1)) for name in client_module.LEFT_OUT}

    missing = schema_operations(schema) - called - left_out
    assert missing == set()
    # Nothing is listed as left out that the client calls anyway, or the API dropped.
    assert left_out & called == set()
    assert left_out - schema_operations(schema) == set()


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__name__)
def test_every_model_field_is_a_property_of_its_schema_component(schema, model):
    component = schema["components"]["schemas"][model.schema_component]

    assert set(model.model_fields) - set(component["properties"]) == set()


def test_a_model_requires_no_field_the_schema_lets_the_server_leave_out(schema):
    for model in MODELS:
        component = schema["components"]["schemas"][model.schema_component]
        required = {name for name, field in model.model_fields.items() if field.is_required()}
        assert required <= set(component.get("required", [])), model.__name__


def test_the_package_declares_its_version_once():
    pyproject = Path(evalhub_client.__file__).parents[2] / "pyproject.toml"

    assert f'version = "{evalhub_client.__version__}"' in pyproject.read_text()
