"""One CPU-bound part of a report computed in a forked process while the report goes on.

An analysis runs in one process, and the parts of a Spot The Bot report that cost the most
(the stability analysis's hundreds of small TrueSkill bootstraps, the main bootstrap and the
plots) spend most of their time in the interpreter, not in numpy loops that release the GIL:
threads would take turns. A forked process computes such a part on a second core instead,
from the parent's memory as it was at the fork, and sends back a small picklable result.

A bare ``os.fork``, not a ``multiprocessing`` (or billiard) process: an analysis runs inside a
Celery prefork worker, a daemonic process, from which the standard library refuses to start
children; and a multiprocessing child runs the after-fork hooks that libraries register, such
as kombu's, which closes the broker connections it inherited, talking to Redis on the
parent's sockets (seen here: the child hung reading the parent's connection). This child
runs the part, writes its pickled result to a pipe and leaves with ``os._exit``: no hook, no
``atexit``, no finaliser touches what it inherited, and the parent's database and broker
connections are never used by it.

The part must be a pure function of its arguments. Without a second core, or where processes
cannot be forked, or when the caller says the work is too small to pay for a fork (a few tens
of milliseconds), the part is computed in this process when its result is asked for, so the
report is the same either way.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import weakref

__all__ = ["can_fork", "start"]


class _Deferred:
    """The part computed here, when its result is first asked for."""

    def __init__(self, function, args):
        self._function, self._args = function, args

    def result(self):
        return self._function(*self._args)


class _Forked:
    """The part computed in a forked process; ``result`` waits for it."""

    def __init__(self, function, args):
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            _run_child(write_end, function, args)  # never returns
        os.close(write_end)
        self.pid = pid
        self._reader = os.fdopen(read_end, "rb")
        # A report that fails before asking for the part must not leave the child computing,
        # or blocked on a pipe nobody reads, in a long-lived worker.
        self._abandon = weakref.finalize(self, _stop, self._reader, pid)

    def result(self):
        self._abandon.detach()
        with self._reader:
            data = self._reader.read()
        status = _reap(self.pid)
        if not data:
            raise ChildProcessError(
                f"the process computing a part of the report ended ({status}) without a result"
            )
        failed, value = pickle.loads(data)
        if failed:
            raise value
        return value


def _run_child(write_end: int, function, args) -> None:
    """In the child: ``function(*args)``, or the exception it raised, pickled to the pipe."""
    code = 1
    try:
        try:
            outcome = (False, function(*args))
        except Exception as error:  # handed to the parent, which raises it
            outcome = (True, error)
        with os.fdopen(write_end, "wb") as pipe:
            pickle.dump(outcome, pipe, protocol=pickle.HIGHEST_PROTOCOL)
        code = 0
    finally:
        os._exit(code)


def _reap(pid: int) -> str:
    """Wait for the child; how it ended, in words."""
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:  # reaped elsewhere (a SIGCHLD handler of the host process)
        return "exit status unknown"
    return f"exit code {os.waitstatus_to_exitcode(status)}"


def _stop(reader, pid: int) -> None:
    reader.close()
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    _reap(pid)


def start(function, *args, worth_a_process: bool = True):
    """``function(*args)`` started on another core if one is free; ``.result()`` gives it
    (and raises what it raised)."""
    if worth_a_process and can_fork():
        return _Forked(function, args)
    return _Deferred(function, args)


def can_fork() -> bool:
    """Whether this process may use a second core by forking."""
    if not hasattr(os, "fork") or not hasattr(os, "sched_getaffinity"):
        return False
    return len(os.sched_getaffinity(0)) >= 2
