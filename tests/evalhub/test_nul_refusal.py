"""People's NULs refused where they enter (evalhub/nul_refusal.py): the URL of every request
(a 400 before any view, in the API's error shape under /api/) and every form (the form
base RefusesNul, which every form of the project and every admin's form has). These
requests were 500s on PostgreSQL, which stores no NUL; they run there in CI's second stage."""

import importlib
import pkgutil

from django import forms
from django.contrib import admin

from evalhub.nul_refusal import RefusesNul

APPS = ("evalhub", "endpoints", "annotation", "tournaments", "judging", "analysis", "portability")


def project_form_classes() -> list[type]:
    for app in APPS:
        package = importlib.import_module(app)
        for module in pkgutil.walk_packages(package.__path__, f"{app}."):
            if ".migrations" in module.name or ".management" in module.name:
                continue
            importlib.import_module(module.name)
    found, stack = [], [forms.BaseForm]
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if cls.__module__.split(".")[0] in APPS:
            found.append(cls)
    return found


def test_every_form_of_the_project_has_the_form_base():
    classes = project_form_classes()
    assert len(classes) > 20  # the walk found the project's forms
    missing = sorted(f"{c.__module__}.{c.__qualname__}" for c in classes if not issubclass(c, RefusesNul))
    assert missing == []


def test_every_admin_form_of_the_project_has_the_form_base():
    """The project's admins (evalhub/admin_tools.py's bases); Django's and the libraries'
    (users, groups, tokens, lockouts) edit plain text fields, which Django refuses a NUL."""
    missing = []
    for model, model_admin in admin.site._registry.items():
        if type(model_admin).__module__.split(".")[0] not in APPS:
            continue
        admins = [model_admin, *(inline(model, admin.site) for inline in model_admin.inlines)]
        for each in admins:
            if not issubclass(each.form, RefusesNul):
                missing.append(type(each).__name__)
    assert missing == []
