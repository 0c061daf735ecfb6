"""Who is working: the worker a start link names, remembered in the signed session."""

from django.db import IntegrityError, transaction

from .crowd.base import Arrival
from .models import Worker

SESSION_KEY = "annotation_worker"


def worker_for(arrival: Arrival, user=None) -> Worker:
    try:
        with transaction.atomic():
            worker, _ = Worker.objects.get_or_create(
                provider=arrival.provider, external_id=arrival.external_id
            )
    except IntegrityError:  # two first visits at once
        worker = Worker.objects.get(provider=arrival.provider, external_id=arrival.external_id)
    if (
        user is not None
        and user.is_authenticated
        and worker.user_id is None
        and (arrival.external_id == f"user:{user.username}")
    ):
        Worker.objects.filter(pk=worker.pk).update(user=user)
        worker.user = user
    return worker


def remember(request, worker: Worker) -> None:
    if request.session.get(SESSION_KEY) != str(worker.public_id):
        # A new identity on this browser gets a new session key (no session fixation).
        request.session.cycle_key()
    request.session[SESSION_KEY] = str(worker.public_id)


def current_worker(request) -> Worker | None:
    public_id = request.session.get(SESSION_KEY)
    if not public_id:
        return None
    return Worker.objects.filter(public_id=public_id).first()
