"""One lease for background work: collection, judge runs and analysis runs claim through it.

A lease is a row (``evalhub.models.Lease``) keyed by the work it covers ("analysis-run:42",
"judge-run:7", "collection:13"), naming its owner (host, process and a random token) and
the moment it lapses. The owner renews it while the work runs; when the owner dies
(``kill -9``, a lost machine) the renewals stop, the lease lapses after ``ttl`` and the
next worker to ask takes it over. A worker asking on the same host as a dead owner (the
message redelivered by ``task_reject_on_worker_lost``) takes it over at once.

Acquiring is one conditional UPDATE (take over a lapsed lease) or one INSERT (a new
lease) that the unique key decides between concurrent callers, so exactly one caller wins
on PostgreSQL and on SQLite. The work's own writes go through ``Held.fence`` so a worker
that lost its lease (it was thought dead) writes nothing.

Heartbeats. ``holding`` renews from a daemon thread on its own database connection (closed
when the thread ends) when the work runs in a worker on a server database, and the work
calls ``Held.beat()`` at its checkpoints everywhere; on SQLite (embedded mode, one process,
often inside a request's transaction that a second connection could not see) the
checkpoints alone renew it.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, connection, connections, transaction
from django.db.models import CharField, Exists, F, OuterRef, Q, QuerySet, Value
from django.db.models.functions import Cast, Concat
from django.utils import timezone

from .models import Lease

__all__ = [
    "Held",
    "LeaseLost",
    "acquire",
    "held_elsewhere",
    "holding",
    "key_for",
    "lapsed",
    "release",
    "renew",
]

logger = logging.getLogger(__name__)


class LeaseLost(Exception):
    """Another owner holds the lease now (this one was thought dead): stop, write nothing."""


def key_for(prefix: str, pk: int) -> str:
    return f"{prefix}:{pk}"


def default_ttl() -> float:
    return float(settings.EVALHUB_LEASE_SECONDS)


def _owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(6)}"


def _dead_here(owner: str) -> bool:
    """The owner ran on this host in a process that no longer exists."""
    host, _, rest = owner.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit() or int(pid_text) == os.getpid():
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


@dataclass
class Held:
    """A lease this process holds."""

    key: str
    owner: str
    attempts: int
    ttl: float
    lost: threading.Event = field(default_factory=threading.Event)
    _renewed: float = field(default_factory=time.monotonic)
    _threaded: bool = False

    @property
    def interval(self) -> float:
        """Renewals come four times a lease, so one late renewal never lets it lapse."""
        return self.ttl / 4

    def beat(self) -> None:
        """A checkpoint of the work: raise LeaseLost if the lease is gone; renew it here
        when no heartbeat thread does and a renewal is due."""
        if self.lost.is_set():
            raise LeaseLost(self.key)
        if self._threaded or time.monotonic() - self._renewed < self.interval:
            return
        if not renew(self):
            raise LeaseLost(self.key)

    def fence(self, queryset: QuerySet) -> QuerySet:
        """``queryset`` restricted to while this lease is still ours: an update through
        it writes nothing once another owner has taken the work over."""
        mine = Lease.objects.filter(key=self.key, owner=self.owner)
        return queryset.filter(Exists(mine))


def acquire(key: str, ttl: float | None = None) -> Held | None:
    """The lease on ``key`` for this process, or None while another owner holds it.

    Free, lapsed, or held by a dead process of this host: taken. One statement decides
    between concurrent callers (a conditional UPDATE, or an INSERT against the unique key)."""
    ttl = default_ttl() if ttl is None else ttl
    owner = _owner()
    now = timezone.now()
    fields = {
        "owner": owner,
        "acquired_at": now,
        "heartbeat_at": now,
        "expires_at": now + timedelta(seconds=ttl),
    }
    current = Lease.objects.filter(key=key).values_list("owner", "expires_at").first()
    if current is None:
        try:
            with transaction.atomic():
                Lease.objects.create(key=key, attempts=1, **fields)
        except IntegrityError:
            return None  # another caller inserted it first
        return Held(key, owner, 1, ttl)
    takeable = Q(expires_at__lte=now)
    if _dead_here(current[0]):
        takeable |= Q(owner=current[0])
    taken = Lease.objects.filter(takeable, key=key).update(attempts=F("attempts") + 1, **fields)
    if not taken:
        return None
    attempts = Lease.objects.filter(key=key, owner=owner).values_list("attempts", flat=True)
    held = Held(key, owner, attempts.first() or 1, ttl)
    logger.warning("Took over the lapsed lease %s (owner was %s)", key, current[0])
    return held


def renew(held: Held) -> bool:
    """Push the lease's end ``ttl`` ahead; False (and ``held.lost`` set) if it is not ours."""
    now = timezone.now()
    renewed = Lease.objects.filter(key=held.key, owner=held.owner).update(
        heartbeat_at=now, expires_at=now + timedelta(seconds=held.ttl)
    )
    if renewed:
        held._renewed = time.monotonic()
    else:
        held.lost.set()
    return bool(renewed)


def release(held: Held) -> None:
    """Give the lease up (the work is finished or handed on); nothing if it is not ours."""
    Lease.objects.filter(key=held.key, owner=held.owner).delete()


def held_elsewhere(prefix: str, ref: str = "pk") -> Exists:
    """For a queryset of the work itself: its lease (``prefix:<ref>``) is live."""
    key = Concat(Value(f"{prefix}:"), Cast(OuterRef(ref), CharField()))
    return Exists(Lease.objects.filter(key=key, expires_at__gt=timezone.now()))


def lapsed(prefix: str, ref: str = "pk") -> Q:
    """For a queryset of the work itself: no live lease covers it (its owner died, or it
    was never taken); combine it with the work's own "running" status."""
    return ~Q(held_elsewhere(prefix, ref))


def _threads_possible() -> bool:
    # A second connection cannot see an uncommitted lease row (a test's or a request's
    # transaction), and SQLite would make it wait for the file's write lock.
    return connection.vendor != "sqlite" and not connection.in_atomic_block


class _Heartbeat(threading.Thread):
    def __init__(self, held: Held):
        super().__init__(name=f"lease {held.key}", daemon=True)
        self.held = held
        self.stopping = threading.Event()

    def run(self) -> None:
        try:
            while not self.stopping.wait(self.held.interval):
                try:
                    if not renew(self.held):
                        logger.warning("Lost the lease %s", self.held.key)
                        return
                except Exception:
                    # The database may come back before the lease lapses; keep trying.
                    logger.exception("Could not renew the lease %s", self.held.key)
        finally:
            connections.close_all()  # this thread's connections only


@contextmanager
def holding(
    key: str, ttl: float | None = None, *, thread: bool | None = None
) -> Iterator[Held | None]:
    """Hold the lease on ``key`` while the block runs (None: another owner holds it).

    With ``thread`` (by default when a server database allows it) a daemon thread renews
    it; the block calls ``beat()`` at its checkpoints either way. Released at the end,
    whatever happened, so the next message for the work can take it at once."""
    held = acquire(key, ttl)
    if held is None:
        yield None
        return
    heartbeat = None
    if _threads_possible() if thread is None else thread:
        heartbeat = _Heartbeat(held)
        held._threaded = True
        heartbeat.start()
    try:
        yield held
    finally:
        if heartbeat is not None:
            heartbeat.stopping.set()
            heartbeat.join()
        release(held)
