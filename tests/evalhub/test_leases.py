"""The one lease for background work (evalhub/leases.py): acquired once, refused while
held, taken over when lapsed or when its owner's process is gone, renewed, released,
fencing the work's writes, and decided once under concurrency on PostgreSQL."""

import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.db import connections
from django.utils import timezone

from evalhub import leases
from evalhub.models import Lease, System
from tests import factories

KEY = "analysis-run:42"


@pytest.mark.django_db
def test_a_free_lease_is_acquired_with_its_owner_and_expiry():
    held = leases.acquire(KEY, ttl=60)
    assert held is not None and held.attempts == 1
    row = Lease.objects.get(key=KEY)
    assert row.owner == held.owner and row.owner.startswith(f"{socket.gethostname()}:")
    assert timedelta(seconds=55) < row.expires_at - timezone.now() <= timedelta(seconds=60)


@pytest.mark.django_db
def test_a_held_lease_is_refused_and_left_unchanged():
    first = leases.acquire(KEY, ttl=60)
    assert leases.acquire(KEY, ttl=60) is None
    row = Lease.objects.get()
    assert row.owner == first.owner and row.attempts == 1


@pytest.mark.django_db
def test_a_lapsed_lease_is_taken_over_and_the_old_owner_is_fenced_out():
    factories.lease(KEY, lapsed=True)
    held = leases.acquire(KEY, ttl=60)
    assert held is not None and held.attempts == 2
    row = Lease.objects.get()
    assert row.owner == held.owner and row.expires_at > timezone.now()
    old = leases.Held(KEY, "another-host:4242:feedbeef", 1, 60)
    assert not leases.renew(old) and old.lost.is_set()
    system = factories.system()
    assert old.fence(System.objects.filter(pk=system.pk)).update(name="late") == 0
    assert held.fence(System.objects.filter(pk=system.pk)).update(name="mine") == 1
    assert System.objects.get(pk=system.pk).name == "mine"


@pytest.mark.django_db
def test_a_live_lease_of_a_dead_process_of_this_host_is_taken_at_once():
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    factories.lease(KEY, owner=f"{socket.gethostname()}:{gone.pid}:token")
    held = leases.acquire(KEY, ttl=60)
    assert held is not None and held.attempts == 2
    assert Lease.objects.get().owner == held.owner


@pytest.mark.django_db
def test_a_live_lease_of_another_host_is_not_second_guessed():
    factories.lease(KEY, owner="another-host:1:token")
    assert leases.acquire(KEY, ttl=60) is None
    assert Lease.objects.get().owner == "another-host:1:token"


@pytest.mark.django_db
def test_renewing_pushes_the_expiry_ahead():
    held = leases.acquire(KEY, ttl=60)
    Lease.objects.update(expires_at=timezone.now() + timedelta(seconds=1))
    assert leases.renew(held)
    row = Lease.objects.get()
    assert row.expires_at - timezone.now() > timedelta(seconds=55)
    assert row.heartbeat_at > row.acquired_at - timedelta(seconds=1)


@pytest.mark.django_db
def test_a_checkpoint_renews_when_due_and_raises_once_the_lease_is_lost():
    held = leases.acquire(KEY, ttl=4)  # a renewal is due every second
    time.sleep(1.1)
    before = Lease.objects.get().expires_at
    held.beat()
    assert Lease.objects.get().expires_at > before
    Lease.objects.update(owner="someone-else")
    time.sleep(1.1)
    with pytest.raises(leases.LeaseLost):
        held.beat()


@pytest.mark.django_db
def test_releasing_frees_it_for_the_next_owner_at_once():
    held = leases.acquire(KEY, ttl=60)
    leases.release(held)
    assert not Lease.objects.exists()
    again = leases.acquire(KEY, ttl=60)
    assert again is not None and again.owner != held.owner


@pytest.mark.django_db
def test_holding_releases_the_lease_even_when_the_work_raises():
    with pytest.raises(RuntimeError), leases.holding(KEY, ttl=60) as held:
        assert held is not None and Lease.objects.filter(owner=held.owner).exists()
        raise RuntimeError("the work failed")
    assert not Lease.objects.exists()


@pytest.mark.django_db
def test_holding_yields_none_while_another_owner_holds_it():
    factories.lease(KEY)
    with leases.holding(KEY, ttl=60) as held:
        assert held is None
    assert Lease.objects.get().owner == "another-host:4242:feedbeef"


@pytest.mark.django_db
def test_the_lapsed_filter_selects_work_without_a_live_lease():
    alive, dead, never = (factories.system(slug=f"s{i}") for i in range(3))
    factories.lease(f"system:{alive.pk}")
    factories.lease(f"system:{dead.pk}", lapsed=True)
    lapsed = System.objects.filter(leases.lapsed("system")).values_list("pk", flat=True)
    assert sorted(lapsed) == sorted([dead.pk, never.pk])


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_callers_acquire_a_lease_once():
    barrier = threading.Barrier(16)

    def contend(_):
        try:
            barrier.wait()
            return leases.acquire(KEY, ttl=60)
        finally:
            connections.close_all()

    with ThreadPoolExecutor(16) as pool:
        won = [held for held in pool.map(contend, range(16)) if held is not None]
    assert len(won) == 1 and Lease.objects.get().owner == won[0].owner


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_callers_take_a_lapsed_lease_over_once():
    factories.lease(KEY, lapsed=True)
    barrier = threading.Barrier(16)

    def contend(_):
        try:
            barrier.wait()
            return leases.acquire(KEY, ttl=60)
        finally:
            connections.close_all()

    with ThreadPoolExecutor(16) as pool:
        won = [held for held in pool.map(contend, range(16)) if held is not None]
    row = Lease.objects.get()
    assert len(won) == 1 and row.owner == won[0].owner and row.attempts == 2


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_heartbeat_thread_keeps_a_lease_alive_past_its_ttl():
    with leases.holding(KEY, ttl=2) as held:
        assert held._threaded
        time.sleep(3)
        assert Lease.objects.get().expires_at > timezone.now()
        held.beat()  # not lost
    assert not Lease.objects.exists()
