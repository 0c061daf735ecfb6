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


def _visible_field(user):
    from rest_framework.test import APIRequestFactory

    from evalhub.api.fields import VisibleSlugRelatedField

    request = APIRequestFactory().get("/")
    request.user = user
    field = VisibleSlugRelatedField(noun="system", slug_field="slug", queryset=System.objects.all())
    field._context = {"request": request}
    return field


def test_a_visible_reference_finds_what_the_user_may_see():
    owner = factories.user("owner")
    mine = factories.system(owner, slug="mine", visibility="private")
    assert _visible_field(owner).to_internal_value("mine") == mine


def test_a_hidden_and_an_absent_reference_get_the_same_answer():
    factories.system(factories.user("carol"), slug="hers", visibility="private")
    field = _visible_field(factories.user("bob"))
    answers = []
    for slug in ("hers", "nobodys"):
        with pytest.raises(ValidationError) as refused:
            field.to_internal_value(slug)
        answers.append(str(refused.value.detail[0]))
    assert answers == ["No system 'hers'.", "No system 'nobodys'."]
