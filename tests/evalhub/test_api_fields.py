"""The API's shared fields: a reference names only what the caller may see, and "absent"
and "not yours" get the same answer. (A NUL in a reference never gets this far: the
parsers refuse the body, tests/evalhub/test_api_parsers.py.)"""

import pytest
from rest_framework.exceptions import ValidationError

from evalhub.models import System
from tests import factories

pytestmark = pytest.mark.django_db


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
