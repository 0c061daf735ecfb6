"""Background work of the endpoints app (Celery, on beat's schedule)."""

from celery import shared_task

from . import calls


@shared_task
def prune_endpoint_calls() -> int:
    """Keep the call outcomes within their bounds (endpoints/calls.py); how many went."""
    return calls.prune()
