"""Sending a judge run to the workers, for the modules that start or resume runs.

Its own module so that starting a run (judging/runs.py) reaches the task without the task's
module (judging/tasks.py → execution.py) ever importing back: the worker hands the rest of
a run on from the task itself, not from the execution."""

from evalhub.queueing import enqueue

from .models import JudgeRun
from .tasks import run_judge


def send(run: JudgeRun) -> bool:
    """Queue the run's task; False (logged) when the broker is unreachable, and the lease
    sweep (judging/tasks.py) sends it again later."""
    return enqueue(run_judge, run.pk)
