"""Secrets EvalHub stores (endpoints' tokens and API keys), encrypted at rest with Fernet
(AES-128-CBC and HMAC-SHA256, from `cryptography`).

`settings.EVALHUB_SECRET_KEYS` lists Fernet keys: the first encrypts, every one decrypts
(`MultiFernet`). A key is rotated by putting a new one first, running `manage.py
rotate_secrets` (every stored secret encrypted again with the first key), then dropping the
old one (docs/production.md). With DEBUG on and no keys set, settings derive one from
SECRET_KEY.

`EncryptedTextField` is the model field: plain text in Python, a Fernet token in the
database, "" for "no secret" (so `bool(value)` says whether one is stored). A secret never
leaves through serialization: `dumpdata` and `export_all` read it as "", and the field's
`left_out_flag` (a boolean of the same model) records on an exported row that a secret was
there, so that the restored object asks for it again.
"""

from __future__ import annotations

from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.apps import apps
from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from django.db import models, transaction
from django.db.models.functions import Cast


class SecretUnreadable(ImproperlyConfigured):
    """A stored secret that no key of EVALHUB_SECRET_KEYS decrypts."""


UNREADABLE = (
    "A stored secret cannot be decrypted with any key of EVALHUB_SECRET_KEYS: was a key "
    "dropped before `manage.py rotate_secrets` encrypted everything with the first one?"
)


@lru_cache(maxsize=4)
def _cipher(keys: tuple[str, ...]) -> MultiFernet:
    return MultiFernet([Fernet(key) for key in keys])


def cipher() -> MultiFernet:
    return _cipher(tuple(settings.EVALHUB_SECRET_KEYS))


def encrypt(text: str) -> str:
    return cipher().encrypt(text.encode()).decode("ascii")


def decrypt(token: str) -> str:
    try:
        return cipher().decrypt(token.encode("ascii")).decode()
    except (InvalidToken, UnicodeEncodeError):
        raise SecretUnreadable(UNREADABLE) from None


class EncryptedTextField(models.TextField):
    """Text encrypted in the database. Never filter on it: the same text encrypts to a new
    token each time. `left_out_flag` names the model's BooleanField that an export sets
    where it left a secret out."""

    def __init__(self, *args, left_out_flag: str = "", **kwargs):
        self.left_out_flag = left_out_flag
        super().__init__(*args, **kwargs)

    def deconstruct(self):
        name, path, args, kwargs = super().deconstruct()
        kwargs["left_out_flag"] = self.left_out_flag
        return name, path, args, kwargs

    def check(self, **kwargs):
        return [*super().check(**kwargs), *self._check_left_out_flag()]

    def _check_left_out_flag(self):
        try:
            flag = self.model._meta.get_field(self.left_out_flag)
        except Exception:
            flag = None
        if isinstance(flag, models.BooleanField):
            return []
        return [
            checks.Error(
                f"left_out_flag {self.left_out_flag!r} must name a BooleanField of the model, "
                "set where an export left this secret out.",
                obj=self,
                id="evalhub.E101",
            )
        ]

    def from_db_value(self, value, expression, connection):
        return decrypt(value) if value else value

    def get_prep_value(self, value):
        value = super().get_prep_value(value)
        return encrypt(value) if value else value

    def value_from_object(self, obj):
        # What serializers (dumpdata, export_all) and forms' initial values read.
        return ""


def secret_fields() -> list[tuple[type[models.Model], EncryptedTextField]]:
    """Every encrypted field of every installed model."""
    return [
        (model, field)
        for model in apps.get_models()
        for field in model._meta.concrete_fields
        if isinstance(field, EncryptedTextField)
    ]


def leave_out_secrets(obj) -> list[str]:
    """Blank `obj`'s secrets in memory (never saved) and raise their left-out flags; the
    names of the fields that held one. For an export."""
    left_out = []
    for field in obj._meta.concrete_fields:
        if isinstance(field, EncryptedTextField) and getattr(obj, field.attname):
            setattr(obj, field.attname, "")
            setattr(obj, field.left_out_flag, True)
            left_out.append(field.name)
    return left_out


def rotate_stored_secrets(*, forget_unreadable: bool = False) -> tuple[int, list[str]]:
    """Encrypt every stored secret again with the first key; how many, and the rows whose
    secret no key decrypts. Those stop it, all or nothing, with the rows named; or, with
    `forget_unreadable` (its key is lost for good), each is blanked and flagged as left out,
    so that its owner is asked for it again, as after an import."""
    rotated, unreadable = 0, []
    with transaction.atomic():
        for model, field in secret_fields():
            # The stored token as it is, not decrypted by the field.
            stored = (
                model._base_manager.exclude(**{field.attname: ""})
                .annotate(_stored=Cast(field.attname, models.TextField()))
                .values_list("pk", "_stored")
            )
            for pk, token in stored.iterator():
                try:
                    fresh = cipher().rotate(token.encode("ascii")).decode("ascii")
                except (InvalidToken, UnicodeEncodeError):
                    unreadable.append(f"{model._meta.label} {pk}")
                    if forget_unreadable:
                        model._base_manager.filter(pk=pk).update(
                            **{field.attname: "", field.left_out_flag: True}
                        )
                    continue
                model._base_manager.filter(pk=pk).update(
                    **{field.attname: models.Value(fresh, output_field=models.TextField())}
                )
                rotated += 1
        if unreadable and not forget_unreadable:  # raised inside: every update rolls back
            raise SecretUnreadable(f"{UNREADABLE} Unreadable: {', '.join(unreadable[:20])}.")
    return rotated, unreadable
