"""evalhub/api/exceptions.py: every input error of the API has the shape of UserInputError."""

import pytest
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.test import APIClient, APIRequestFactory
from rest_framework.views import APIView

from evalhub.errors import Problem, UserInputError
from tests import factories

pytestmark = pytest.mark.django_db


class Inner(serializers.Serializer):
    score = serializers.IntegerField(min_value=1)


class Outer(serializers.Serializer):
    slug = serializers.SlugField()
    inner = Inner()
    rows = Inner(many=True)

    def validate(self, data):
        raise serializers.ValidationError("never valid as a whole")


def answer(raise_):
    class View(APIView):
        authentication_classes = []
        permission_classes = []

        def post(self, request):
            raise_(request)

    return View.as_view()(APIRequestFactory().post("/", {}, format="json"))


def test_a_user_input_error_is_a_400_with_its_problems():
    def raise_(request):
        raise UserInputError([Problem(2, "empty response."), Problem(field="x", message="bad.")])

    response = answer(raise_)
    assert response.status_code == 400
    assert response.data == {
        "errors": [{"line": 2, "message": "empty response."}, {"field": "x", "message": "bad."}],
        "error_count": 2,
    }


def test_a_serializer_error_has_the_same_shape_with_nested_field_names():
    def raise_(request):
        Outer(
            data={"slug": "not a slug", "inner": {"score": 0}, "rows": [{"score": 1}, {}]}
        ).is_valid(raise_exception=True)

    response = answer(raise_)
    assert response.status_code == 400
    body = response.data
    fields = [e["field"] for e in body["errors"]]
    assert fields == ["slug", "inner.score", "rows.1.score"]
    assert body["error_count"] == 3
    assert all(isinstance(e["message"], str) and e["message"] for e in body["errors"])


def test_an_error_of_no_field_is_named_as_drf_names_it():
    def raise_(request):
        serializer = Outer(data={"slug": "ok", "inner": {"score": 1}, "rows": []})
        serializer.is_valid(raise_exception=True)

    response = answer(raise_)
    assert response.data == {
        "errors": [{"field": "non_field_errors", "message": "never valid as a whole"}],
        "error_count": 1,
    }


def test_other_errors_keep_drf_answer():
    def raise_(request):
        raise NotFound("No such system.")

    response = answer(raise_)
    assert response.status_code == 404
    assert response.data == {"detail": "No such system."}


def test_a_real_endpoint_answers_a_missing_file_in_the_shape():
    client = APIClient()
    client.force_authenticate(factories.user("boss", staff=True))
    response = client.post("/api/conversations/import/", {}, format="multipart")
    assert response.status_code == 400
    assert response.json() == {
        "errors": [{"field": "file", "message": "No file was submitted."}],
        "error_count": 1,
    }


def test_the_schema_documents_the_shape_for_uploads(client):
    schema = client.get("/api/schema/", {"format": "json"}).json()
    submit = schema["paths"]["/api/systems/{slug}/submissions/"]["post"]["responses"]["400"]
    ref = submit["content"]["application/json"]["schema"]["$ref"]
    shape = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]
    assert set(shape["properties"]) == {"errors", "error_count"}
