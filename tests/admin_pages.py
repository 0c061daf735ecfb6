"""What every app's admin tests check alike (tests/<app>/test_admin.py): each model of the app
has an admin; its change list, a search and a change page answer; and its change list costs
no more queries with more rows. Each app's tests populate their own rows and call these."""

from collections.abc import Callable

from django.apps import apps
from django.contrib import admin
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse


def admin_url(model, action="changelist", *args) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{action}", args=args)


def assert_every_model_has_an_admin(app_label: str, models) -> None:
    found = set(apps.get_app_config(app_label).get_models())
    assert found == set(models)
    assert all(model in admin.site._registry for model in found)


def assert_pages_answer(client, model, search: str) -> None:
    """The change list, a search for `search` and the first row's change page answer 200."""
    changelist = client.get(admin_url(model))
    found = client.get(admin_url(model) + f"?q={search}")
    change = client.get(admin_url(model, "change", model.objects.first().pk))
    assert (changelist.status_code, found.status_code, change.status_code) == (200, 200, 200)
    assert changelist.context["cl"].result_count == model.objects.count()


def change_list_rows_with_flat_queries(
    client, model, add_more: Callable[[], None], assert_max_num_queries
) -> tuple[int, int]:
    """(rows before, rows after `add_more`): the change list after costs no more queries than
    before. The caller asserts that rows were added (some models gain none)."""
    with CaptureQueriesContext(connection) as small:
        rows = client.get(admin_url(model)).context["cl"].result_count
    add_more()
    with assert_max_num_queries(len(small.captured_queries)):
        bigger = client.get(admin_url(model)).context["cl"].result_count
    return rows, bigger
