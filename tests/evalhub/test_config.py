"""The declared settings (evalhub/config.py): every variable typed, ranged and documented,
read nowhere else, and a bad value stops start-up with a message naming it."""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalhub import config

ROOT = Path(__file__).resolve().parents[2]
RUNTIME_PACKAGES = (
    "evalhub",
    "endpoints",
    "annotation",
    "tournaments",
    "judging",
    "analysis",
    "demo",
    "portability",
    "evalstats",
)


@pytest.fixture
def environ(monkeypatch):
    """A clean environment with only DEBUG set, so the defaults show."""
    for name in [*config.Settings.model_fields, *config.REPLACED]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DEBUG", "1")
    return monkeypatch


def environment_reads(source: str) -> list[str]:
    """What a module reads from the environment: os.environ[...], .get, getenv."""
    reads = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in {"environ", "getenv"}:
            reads.append(ast.unparse(node))
    return reads


def test_every_variable_has_a_description_and_a_group():
    for name, field in config.Settings.model_fields.items():
        assert field.description and len(field.description) > 20, name
        assert field.json_schema_extra["group"] in config.GROUPS, name


def test_no_runtime_module_reads_the_environment_but_the_schema():
    readers = {}
    for package in RUNTIME_PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            source = path.read_text(encoding="utf-8")
            reads = environment_reads(source)
            # DJANGO_SETTINGS_MODULE is Django's own, set by the entry points; the schema
            # looks for the variables it replaced.
            schema = path == ROOT / "evalhub" / "config.py"
            if reads and "DJANGO_SETTINGS_MODULE" not in source and not schema:
                readers[str(path.relative_to(ROOT))] = reads
    assert readers == {}


def test_every_declared_variable_is_used_by_the_settings():
    settings_source = (ROOT / "evalhub" / "settings.py").read_text(encoding="utf-8")
    unused = [name for name in config.Settings.model_fields if f"env.{name}" not in settings_source]
    assert unused == []


def test_defaults_give_the_embedded_mode(environ):
    env = config.load()
    assert env.DATABASE_URL == "" and env.CELERY_BROKER_URL == "" and env.CACHE_URL == ""
    assert env.ALLOWED_HOSTS == ["127.0.0.1", "localhost", "testserver"]
    assert env.EVALHUB_TASK_TIME_LIMIT == 660


def test_an_empty_value_counts_as_unset(environ):
    environ.setenv("EVALHUB_BOT_DAILY_BUDGET", "")
    assert config.load().EVALHUB_BOT_DAILY_BUDGET == 5000


def test_values_are_typed(environ):
    environ.setenv("EVALHUB_BOT_DAILY_BUDGET", "77")
    environ.setenv("EVALHUB_SSL_REDIRECT", "no")
    environ.setenv("ALLOWED_HOSTS", " a.example, b.example ,")
    environ.setenv("EVALHUB_PUBLIC_URL", "https://evalhub.example.org/")
    env = config.load()
    assert env.EVALHUB_BOT_DAILY_BUDGET == 77
    assert env.EVALHUB_SSL_REDIRECT is False
    assert env.ALLOWED_HOSTS == ["a.example", "b.example"]
    assert env.EVALHUB_PUBLIC_URL == "https://evalhub.example.org"


def test_a_value_out_of_range_names_the_variable_and_its_range(environ):
    environ.setenv("EVALHUB_CONN_MAX_AGE", "-1")
    with pytest.raises(config.ConfigError) as refused:
        config.load()
    assert refused.value.problems == [
        "EVALHUB_CONN_MAX_AGE must be an integer from 0 to 3600, got '-1': "
        "Input should be greater than or equal to 0"
    ]


def test_every_bad_variable_is_named_at_once(environ):
    environ.setenv("EVALHUB_TASK_TIME_LIMIT", "ten")
    environ.setenv("EVALHUB_SSL_REDIRECT", "maybe")
    environ.setenv("EVALHUB_LOG_LEVEL", "LOUD")
    with pytest.raises(config.ConfigError) as refused:
        config.load()
    named = sorted(problem.split(" ")[0] for problem in refused.value.problems)
    assert named == ["EVALHUB_LOG_LEVEL", "EVALHUB_SSL_REDIRECT", "EVALHUB_TASK_TIME_LIMIT"]


def test_the_outbound_allow_list_is_read_as_a_comma_separated_list(environ):
    environ.setenv("EVALHUB_OUTBOUND_ALLOW", " 10.0.0.5:8000, [fd00::5]:8000 ,models.internal,")
    assert config.load().EVALHUB_OUTBOUND_ALLOW == [
        "10.0.0.5:8000",
        "[fd00::5]:8000",
        "models.internal",
    ]


def test_the_outbound_allow_list_is_empty_unless_set(environ):
    assert config.load().EVALHUB_OUTBOUND_ALLOW == []


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        ("10.0.0.1/8", "has host bits set"),
        ("models.internal:99999", "the port must be a number from 1 to 65535"),
        ("*.internal", "no wildcards"),
        ("169.254.169.254", "EvalHub never connects there, even when allow-listed"),
        ("[fe80::1]:80", "EvalHub never connects there, even when allow-listed"),
    ],
)
def test_a_bad_outbound_allow_entry_stops_start_up_naming_the_variable(environ, entry, why):
    environ.setenv("EVALHUB_OUTBOUND_ALLOW", f"10.0.0.5:8000,{entry}")
    with pytest.raises(config.ConfigError) as refused:
        config.load()
    [problem] = refused.value.problems
    assert problem.startswith("EVALHUB_OUTBOUND_ALLOW must be a comma-separated list")
    assert repr(entry) in problem and why in problem


def test_the_replaced_private_address_switch_stops_start_up_naming_its_successor(environ):
    environ.setenv("EVALHUB_BOT_ALLOW_PRIVATE_ADDRESSES", "1")
    environ.setenv("EVALHUB_LOG_LEVEL", "LOUD")
    with pytest.raises(config.ConfigError) as refused:
        config.load()
    replaced, bad_level = refused.value.problems
    assert replaced.startswith(
        "EVALHUB_BOT_ALLOW_PRIVATE_ADDRESSES was replaced by EVALHUB_OUTBOUND_ALLOW"
    )
    assert bad_level.startswith("EVALHUB_LOG_LEVEL")


def test_the_hard_time_limit_must_be_above_the_soft_one(environ):
    environ.setenv("EVALHUB_TASK_SOFT_TIME_LIMIT", "700")
    with pytest.raises(config.ConfigError) as refused:
        config.load()
    assert "EVALHUB_TASK_TIME_LIMIT must be above EVALHUB_TASK_SOFT_TIME_LIMIT" in str(
        refused.value
    )


def test_production_without_a_secret_key_is_refused(environ):
    environ.setenv("DEBUG", "0")
    with pytest.raises(config.ConfigError) as refused:
        config.load()
    assert "SECRET_KEY is not set" in str(refused.value)


def test_a_public_url_must_be_a_url(environ):
    environ.setenv("EVALHUB_PUBLIC_URL", "evalhub.example.org")
    with pytest.raises(config.ConfigError) as refused:
        config.load()
    assert refused.value.problems[0].startswith("EVALHUB_PUBLIC_URL must be text")


def test_start_up_stops_with_the_variable_named():
    env = {**os.environ, "DEBUG": "1", "EVALHUB_CROWD_SYNC_SECONDS": "5"}
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert "EVALHUB_CROWD_SYNC_SECONDS must be an integer from 10 to 86400, got '5'" in (
        result.stderr
    )


def test_the_reference_has_a_row_for_every_variable():
    page = config.reference_markdown()
    for name in config.Settings.model_fields:
        assert page.count(f"| `{name}` |") == 1, name
    assert "| `EVALHUB_BOT_DAILY_BUDGET` | an integer from 1 to 1000000 | 5000 |" in page


# Issue 23, finding 5: the keys of stored secrets --------------------------------------------

FERNET_KEY = "YmVuY2gtb25seS1ub3QtYS1zZWNyZXQtMDEyMzQ1Njc="  # 32 bytes, URL-safe base64


def test_production_without_keys_for_stored_secrets_is_refused(environ):
    environ.setenv("DEBUG", "0")
    environ.setenv("SECRET_KEY", "x" * 60)
    with pytest.raises(config.ConfigError) as refused:
        config.load()
    assert "EVALHUB_SECRET_KEYS is not set" in str(refused.value)
    environ.setenv("EVALHUB_SECRET_KEYS", FERNET_KEY)
    assert config.load().EVALHUB_SECRET_KEYS == [FERNET_KEY]


def test_keys_are_a_comma_list_in_order(environ):
    other = "c2Vjb25kLWtleS1ub3QtYS1zZWNyZXQtMDEyMzQ1Njc="
    keys = [FERNET_KEY, other]
    environ.setenv("EVALHUB_SECRET_KEYS", " , ".join(keys))
    assert keys == config.load().EVALHUB_SECRET_KEYS


def test_a_key_that_is_not_a_fernet_key_is_refused_without_repeating_it(environ):
    environ.setenv("EVALHUB_SECRET_KEYS", f"{FERNET_KEY},not-a-real-key-but-secret")
    with pytest.raises(config.ConfigError) as refused:
        config.load()
    (problem,) = refused.value.problems
    assert problem.startswith("EVALHUB_SECRET_KEYS must be")
    assert "key 2 is not a Fernet key" in problem
    assert "not-a-real-key-but-secret" not in problem and FERNET_KEY not in problem
