"""docker-compose.yml and the Dockerfile cannot be run here (no Docker engine): check their shape."""

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def compose():
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_compose_has_the_production_services():
    assert set(compose()["services"]) == {"web", "worker", "beat", "postgres", "redis"}


def test_app_services_share_the_image_and_point_at_the_real_services():
    services = compose()["services"]
    for name in ("web", "worker", "beat"):
        service = services[name]
        env = service["environment"]
        assert service["build"] == "." and service["image"] == "evalhub:latest"
        assert env["DEBUG"] == "0"
        assert (
            env["DATABASE_URL"].startswith("postgres://")
            and "@postgres:5432/" in env["DATABASE_URL"]
        )
        assert env["CELERY_BROKER_URL"] == "redis://redis:6379/0"
        assert "SECRET_KEY" in env
        assert service["depends_on"]["postgres"]["condition"] == "service_healthy"
        assert service["depends_on"]["redis"]["condition"] == "service_healthy"


def test_commands_run_gunicorn_and_celery_on_the_project():
    services = compose()["services"]
    assert "gunicorn evalhub.wsgi:application" in services["web"]["command"]
    assert "migrate" in services["web"]["command"]
    assert services["worker"]["command"].startswith("celery -A evalhub worker")
    assert services["beat"]["command"].startswith("celery -A evalhub beat")


def test_data_services_have_healthchecks_and_volumes():
    services = compose()["services"]
    for name in ("postgres", "redis"):
        assert services[name]["healthcheck"]["test"]
        assert services[name]["volumes"]
    assert set(compose()["volumes"]) == {"media", "pgdata", "redisdata"}


def test_dockerfile_installs_the_pinned_requirements_and_runs_as_a_user():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.11", dockerfile, re.M)
    assert "pip install --no-cache-dir -r requirements.txt" in dockerfile
    assert "collectstatic" in dockerfile
    assert re.search(r"^USER evalhub", dockerfile, re.M)


def test_every_requirement_is_pinned():
    for name in ("requirements.txt", "requirements-dev.txt"):
        for line in (ROOT / name).read_text().splitlines():
            line = line.split("#")[0].strip()
            if line and not line.startswith("-r"):
                assert "==" in line, f"{name}: {line} is not pinned"
