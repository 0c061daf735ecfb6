"""docker-compose.yml and the Dockerfile cannot be run here (no Docker engine): check their shape."""

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def compose():
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


APP_SERVICES = ("migrate", "web", "arena", "worker-collection", "worker-analysis", "beat")


def test_compose_has_the_production_services():
    assert set(compose()["services"]) == {*APP_SERVICES, "proxy", "postgres", "redis"}


def test_app_services_share_the_image_and_point_at_the_real_services():
    services = compose()["services"]
    for name in APP_SERVICES:
        service = services[name]
        env = service["environment"]
        assert service["build"] == "." and service["image"] == "evalhub:latest"
        assert env["DEBUG"] == "0"
        assert (
            env["DATABASE_URL"].startswith("postgres://")
            and "@postgres:5432/" in env["DATABASE_URL"]
        )
        assert env["CELERY_BROKER_URL"] == "redis://redis:6379/0"
        assert "SECRET_KEY" in env and "EVALHUB_SECRET_KEYS" in env
        assert service["depends_on"]["postgres"]["condition"] == "service_healthy"
        assert service["depends_on"]["redis"]["condition"] == "service_healthy"


def test_commands_run_gunicorn_and_celery_on_the_project():
    services = compose()["services"]
    assert "gunicorn evalhub.wsgi:application" in services["web"]["command"]
    assert "--threads" in services["web"]["command"]
    assert "migrate" not in services["web"]["command"]
    assert services["migrate"]["command"] == "python manage.py migrate --noinput"
    assert services["worker-collection"]["command"].startswith("celery -A evalhub worker")
    assert services["worker-analysis"]["command"].startswith("celery -A evalhub worker")
    assert services["beat"]["command"].startswith("celery -A evalhub beat")
    assert services["arena"]["command"].startswith("uvicorn evalhub.asgi:application")
    assert "--port 8001" in services["arena"]["command"]


def test_migrations_run_once_before_web_and_workers():
    services = compose()["services"]
    assert services["migrate"]["restart"] == "no"
    assert "migrate" not in services["migrate"]["depends_on"]
    for name in ("web", "arena", "worker-collection", "worker-analysis", "beat"):
        condition = services[name]["depends_on"]["migrate"]["condition"]
        assert condition == "service_completed_successfully", name


def test_each_queue_has_its_own_worker():
    services = compose()["services"]
    assert "--queues=collection,celery" in services["worker-collection"]["command"]
    assert "--queues=analysis" in services["worker-analysis"]["command"]
    from evalhub.celery import app

    queues = {route["queue"] for route in app.conf.task_routes.values()}
    assert queues == {"collection", "analysis"}
    assert "--queues=celery,collection,analysis" in (ROOT / ".ci" / "run").read_text()


def test_the_apps_trust_two_proxies_and_only_the_inner_one_is_reachable():
    from evalhub.config import Settings

    services = compose()["services"]
    default = re.fullmatch(
        r"\$\{EVALHUB_TRUSTED_PROXY_COUNT:-(\d+)\}",
        services["web"]["environment"]["EVALHUB_TRUSTED_PROXY_COUNT"],
    )
    assert default, "docker-compose.yml sets EVALHUB_TRUSTED_PROXY_COUNT with a default"
    count = Settings(EVALHUB_TRUSTED_PROXY_COUNT=default.group(1)).EVALHUB_TRUSTED_PROXY_COUNT
    assert count == 2  # the host's HTTPS proxy, then this file's nginx
    # Reachable around the proxies, anyone could forge the address they would append.
    assert services["proxy"]["ports"] == ["127.0.0.1:8000:80"]
    assert "ports" not in services["web"] and "ports" not in services["arena"]
    # uvicorn reads no forwarded headers itself: the one rule (evalhub/client_address.py)
    # finds the client's address for web and arena alike.
    assert "--no-proxy-headers" in services["arena"]["command"]


def test_web_and_workers_have_healthchecks():
    services = compose()["services"]
    assert "/healthz" in " ".join(services["web"]["healthcheck"]["test"])
    assert "127.0.0.1:8001/healthz" in " ".join(services["arena"]["healthcheck"]["test"])
    for name in ("worker-collection", "worker-analysis"):
        assert "inspect ping" in " ".join(services[name]["healthcheck"]["test"])


def test_no_default_database_password_or_secret_key():
    text = (ROOT / "docker-compose.yml").read_text()
    assert "POSTGRES_PASSWORD:-" not in text
    assert text.count("${POSTGRES_PASSWORD:?") == 2
    assert "${SECRET_KEY:?" in text
    assert "${EVALHUB_SECRET_KEYS:?" in text
    assert compose()["services"]["postgres"]["environment"]["POSTGRES_PASSWORD"].startswith(
        "${POSTGRES_PASSWORD:?"
    )


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


def nginx_conf() -> str:
    return (ROOT / "deploy" / "nginx.conf").read_text()


def proxied_locations() -> dict[str, str]:
    """{location pattern: upstream} of deploy/nginx.conf."""
    found = {}
    for match in re.finditer(r"location (~ )?(\S+) \{(.*?)\n    \}", nginx_conf(), re.S):
        upstream = re.search(r"proxy_pass http://(\w+);", match.group(3)).group(1)
        found[match.group(2)] = upstream
    return found


def test_the_proxy_is_the_one_port_and_mounts_its_configuration():
    services = compose()["services"]
    assert services["proxy"]["ports"] == ["127.0.0.1:8000:80"]
    assert "./deploy/nginx.conf:/etc/nginx/nginx.conf:ro" in services["proxy"]["volumes"]
    assert "ports" not in services["web"] and "ports" not in services["arena"]
    for name in ("web", "arena"):
        assert services["proxy"]["depends_on"][name]["condition"] == "service_healthy"


CHAT_LOCATION = "^/work/assignment/[^/]+/items/[0-9]+/chat/"


def test_the_arenas_battle_paths_go_to_the_asgi_service_unbuffered(settings):
    from django.urls import reverse

    locations = proxied_locations()
    assert locations == {
        "^/arenas/[^/]+/battles/": "arena",
        CHAT_LOCATION: "arena",
        "/": "web",
    }
    battle_paths = [
        reverse("arenas:battle-start", args=["my-arena"]),
        reverse("arenas:turn", args=["my-arena", "7c9e6679-7425-40de-944b-e07fc1f90ae7"]),
        reverse("arenas:stream", args=["my-arena", "7c9e6679-7425-40de-944b-e07fc1f90ae7", 1, "a"]),
        reverse("arenas:stop", args=["my-arena", "7c9e6679-7425-40de-944b-e07fc1f90ae7", 2, "b"]),
    ]
    pages = [reverse("arenas:detail", args=["my-arena"]), reverse("arenas:battle-new", args=["x"])]
    pattern = re.compile("^/arenas/[^/]+/battles/")
    assert all(pattern.match(path) for path in battle_paths)
    assert not any(pattern.match(path) for path in pages)
    arena_block = nginx_conf().split("location ~ ^/arenas/[^/]+/battles/", 1)[1].split("}")[0]
    assert "proxy_buffering off;" in arena_block
    assert "proxy_pass http://arena;" in arena_block


def test_a_chats_turns_and_streamed_replies_go_to_the_asgi_service_unbuffered():
    from django.urls import reverse

    assert proxied_locations()[CHAT_LOCATION] == "arena"
    ids = ["7c9e6679-7425-40de-944b-e07fc1f90ae7", 12]
    waiting_on_bots = [reverse("annotation:chat-stream", args=ids)] + [
        reverse(f"annotation:chat-{action}{suffix}", args=ids)
        for action in ("send", "retry", "end", "flag")
        for suffix in ("", "-json")
    ]
    pages = [
        reverse("annotation:assignment", args=ids[:1]),
        reverse("annotation:submit-item", args=ids),
    ]
    pattern = re.compile(CHAT_LOCATION)
    assert all(pattern.match(path) for path in waiting_on_bots)
    assert not any(pattern.match(path) for path in pages)
    block = nginx_conf().split(f"location ~ {CHAT_LOCATION}", 1)[1].split("}")[0]
    assert "proxy_buffering off;" in block and "proxy_pass http://arena;" in block
