"""Telling users what happened: a notice on their notices page and/or an email.

`notify(user, kind, text, url)` is the one entry point other apps call; each user chooses
per kind (`NoticeKind`) whether they get it on the site, by email, both or neither
(`NoticePreference`, edited on the account page; without a choice both are on). Email goes
through Django's email backend (the console in the embedded mode) once the caller's
transaction commits, so a rolled-back event sends nothing.

Events wired: a submission scored or failed (evalhub.tasks), a campaign complete
(annotation: its last batch submitted, or finished by staff), a tournament's results ready
and an analysis failed (analysis.runs.tasks), a launch requested (every staff user) and
decided (annotation.campaigns), a budget reached (annotation.allocation), a campaign
created needing training it lacks (annotation.campaigns), an endpoint failing
(endpoints.calls).
"""

import logging

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import send_mail
from django.db import IntegrityError, transaction

from .models import Notice, NoticeKind, NoticePreference

logger = logging.getLogger(__name__)


def preferences(user) -> dict[str, tuple[bool, bool]]:
    """{kind: (on_site, by_email)} for every kind, defaults filled in."""
    chosen = {p.kind: (p.on_site, p.by_email) for p in NoticePreference.objects.filter(user=user)}
    return {kind: chosen.get(kind, (True, True)) for kind in NoticeKind.values}


def set_preferences(user, choices: dict[str, tuple[bool, bool]]) -> None:
    with transaction.atomic():
        for kind, (on_site, by_email) in choices.items():
            NoticeKind(kind)  # an unknown kind is a programming error
            NoticePreference.objects.update_or_create(
                user=user, kind=kind, defaults={"on_site": on_site, "by_email": by_email}
            )


def notify(user, kind: str, text: str, url: str = "", *, once_key: str = "") -> Notice | None:
    """Tell `user` about an event of `kind` as they chose. With `once_key`, an event told
    before (a retried task, two requests at once) is not told again. Returns the notice
    stored on the site, if any."""
    if user is None or not user.is_active:
        return None
    kind = NoticeKind(kind)
    on_site, by_email = preferences(user)[kind]
    if once_key and Notice.objects.filter(user=user, once_key=once_key).exists():
        return None
    notice = None
    if on_site or once_key:
        # With a once_key a read row is kept even when the user does not want it shown,
        # so the event is recognised next time; it is created as already read.
        try:
            with transaction.atomic():
                notice = Notice.objects.create(
                    user=user, kind=kind, text=text[:500], url=url, once_key=once_key
                )
        except IntegrityError:
            return None  # told at the same moment by another process
        if not on_site:
            Notice.objects.filter(pk=notice.pk).update(read_at=notice.created)
            notice = None
    if by_email and user.email:
        transaction.on_commit(lambda: _email(user.email, kind, text, url))
    return notice


def notify_staff(kind: str, text: str, url: str = "", *, once_key: str = "") -> int:
    """`notify` every active staff user; how many were told on the site."""
    staff = get_user_model().objects.filter(is_staff=True, is_active=True)
    return sum(1 for user in staff if notify(user, kind, text, url, once_key=once_key))


def _email(address: str, kind: str, text: str, url: str) -> None:
    link = f"\n\n{settings.EVALHUB_PUBLIC_URL}{url}" if url else ""
    body = f"{text}{link}\n\nChoose which notices you get on your account page."
    try:
        send_mail(f"EvalHub: {NoticeKind(kind).label}", body, None, [address])
    except Exception:  # a mail server down must not undo the event it reports
        logger.exception("Could not email a %s notice", kind)


def unread_count(user) -> int:
    if not user.is_authenticated:
        return 0
    return Notice.objects.filter(user=user, read_at__isnull=True).count()


def context(request) -> dict:
    """Template context processor: `unread_notices`, counted only if a template reads it."""
    user = getattr(request, "user", None)
    return {"unread_notices": lambda: unread_count(user) if user is not None else 0}
