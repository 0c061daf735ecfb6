"""Small builders for catalog objects; each returns saved rows."""

import itertools
import json

from django.contrib.auth.models import User

from evalhub.api_tokens import create_token
from evalhub.models import PromptSet, System
from evalhub.services import create_prompt_set, submit_responses

_counter = itertools.count(1)


def user(
    username: str | None = None, *, staff: bool = False, password: str = "pw-for-tests-1"
) -> User:
    username = username or f"user{next(_counter)}"
    # EvalHub's staff are its admins: they get every permission, as load_demo's admin does.
    return User.objects.create_user(
        username,
        email=f"{username}@example.org",
        password=password,
        is_staff=staff,
        is_superuser=staff,
    )


def api_token(owner: User, name: str | None = None) -> str:
    """A new API token of `owner` (evalhub/api_tokens.py): the token itself, for
    `Authorization: Token <token>`."""
    return create_token(owner, name or f"tests {next(_counter)}")[1]


def system(owner: User | None = None, **fields) -> System:
    n = next(_counter)
    fields.setdefault("slug", f"system-{n}")
    fields.setdefault("name", f"System {n}")
    return System.objects.create(owner=owner, **fields)


def prompt_set(
    n_prompts: int = 3, *, references: bool = True, slug: str | None = None
) -> PromptSet:
    slug = slug or f"set-{next(_counter)}"
    lines = [
        json.dumps(
            {
                "id": str(i),
                "context": [f"hello number {i} ?"],
                "references": [f"hi there number {i} ."] if references else [],
            }
        )
        for i in range(1, n_prompts + 1)
    ]
    return create_prompt_set(
        slug=slug, name=slug.title(), data="\n".join(lines).encode(), filename="p.jsonl"
    )


def txt(*lines: str) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def submission(system_: System, prompt_set_: PromptSet, lines: list[str] | None = None):
    count = prompt_set_.prompts.count()
    lines = lines or [f"response {i} of {system_.slug}" for i in range(1, count + 1)]
    return submit_responses(
        system=system_, prompt_set=prompt_set_, data=txt(*lines), filename="r.txt"
    )


def conversation(external_id: str, speakers, texts: list[str], domain: str = "chitchat"):
    """A conversation whose speakers (System, or None for a human) alternate turns."""
    from evalhub.models import Conversation, Speaker, Turn

    c = Conversation.objects.create(external_id=external_id, domain=domain)
    for index, system in enumerate(speakers):
        Speaker.objects.create(conversation=c, index=index, system=system)
    Turn.objects.bulk_create(
        Turn(conversation=c, position=p, speaker=p % 2, text=t) for p, t in enumerate(texts)
    )
    return c


def loaded_conversations():
    """All conversations with what the task builders read, in a stable order."""
    from evalhub.models import Conversation

    return Conversation.objects.prefetch_related("speakers__system", "turns").order_by(
        "external_id"
    )


def lease(key: str, *, lapsed: bool = False, owner: str = "another-host:4242:feedbeef"):
    """A lease held by a worker of another host: live, or lapsed (that worker died)."""
    from datetime import timedelta

    from django.utils import timezone

    from evalhub.models import Lease

    now = timezone.now()
    expires = now - timedelta(seconds=1) if lapsed else now + timedelta(seconds=60)
    return Lease.objects.create(
        key=key, owner=owner, acquired_at=now, heartbeat_at=now, expires_at=expires
    )
