"""`/healthz`: can this process reach the database and the broker? For load balancers and
docker-compose healthchecks; JSON, 200 when both answer, 503 otherwise."""

from django.db import DatabaseError, connection
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from ..celery import app as celery_app


def _database() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError as error:
        return f"unreachable: {type(error).__name__}"
    return "ok"


def _broker() -> str:
    if celery_app.conf.task_always_eager:
        return "none: tasks run in the web process"
    try:
        with celery_app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception as error:  # kombu raises the transport's own errors
        return f"unreachable: {type(error).__name__}"
    return "ok"


@never_cache
@require_GET
def healthz(request):
    checks = {"database": _database(), "broker": _broker()}
    healthy = checks["database"] == "ok" and not checks["broker"].startswith("unreachable")
    return JsonResponse(
        {"status": "ok" if healthy else "unavailable", **checks}, status=200 if healthy else 503
    )
