"""Queueing a task without letting an unreachable broker fail the request.

The work a task does is always recorded in the database first (a submission waiting for
its metrics, a pending analysis run, a pending planned dialogue), so a message that could
not be sent loses nothing: the periodic ``requeue`` tasks (schedule in evalhub/celery.py)
find the rows still pending and send their messages again once the broker is back.
"""

import logging

from kombu.exceptions import OperationalError as BrokerUnreachable

logger = logging.getLogger(__name__)

QUEUE_UNREACHABLE = "queued: the task queue is unreachable, it will be retried"


def enqueue(task, *args) -> bool:
    """Send ``task(*args)`` to its queue; False, logged, when the broker cannot be reached."""
    try:
        task.delay(*args)
    except BrokerUnreachable as error:
        logger.warning("Could not queue %s%s: %s; it will be re-queued", task.name, args, error)
        return False
    return True
