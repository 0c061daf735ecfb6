"""The API's shared fields: a slug holding a NUL character names nothing, on every
database (PostgreSQL would otherwise fail the lookup with a server error)."""

import pytest
from rest_framework.exceptions import ValidationError

from evalhub.api.fields import SlugLookupField
from evalhub.models import System
from tests import factories

pytestmark = pytest.mark.django_db


def test_a_slug_is_looked_up():
    system = factories.system(slug="parrot")
    field = SlugLookupField(slug_field="slug", queryset=System.objects.all())
    assert field.to_internal_value("parrot") == system


def test_a_slug_with_a_nul_character_is_refused_as_not_found_without_a_query(
    django_assert_num_queries,
):
    factories.system(slug="parrot")
    field = SlugLookupField(slug_field="slug", queryset=System.objects.all())
    with django_assert_num_queries(0), pytest.raises(ValidationError) as refused:
        field.to_internal_value("par\x00rot")
    assert "par\\0rot" in str(refused.value.detail[0]) and "\x00" not in str(refused.value.detail)
