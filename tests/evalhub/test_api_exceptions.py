"""evalhub/api/exceptions.py: every input error of the API has the shape of UserInputError."""

import json

import pytest
from rest_framework import serializers
from rest_framework.exceptions import NotFound, Throttled
from rest_framework.test import APIClient, APIRequestFactory
from rest_framework.views import APIView

from evalhub.errors import Problem, UserInputError
from evalhub.models import System
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


# Every other status has the same shape: one error of the request as a whole. --------------


def whole(message: str) -> dict:
    return {"errors": [{"line": None, "message": message}], "error_count": 1}


def test_a_404_raised_by_a_view_has_the_one_shape():
    def raise_(request):
        raise NotFound("No such system.")

    response = answer(raise_)
    assert response.status_code == 404
    assert response.data == whole("No such system.")


def test_a_429_has_the_one_shape_and_keeps_retry_after():
    def raise_(request):
        raise Throttled(wait=30)

    response = answer(raise_)
    assert response.status_code == 429
    assert response["Retry-After"] == "30"
    assert response.data["error_count"] == 1
    assert "30 seconds" in response.data["errors"][0]["message"]


def test_a_401_has_the_one_shape():
    response = APIClient().post("/api/systems/", {"slug": "a", "name": "A"}, format="json")
    assert response.status_code == 401
    assert response.json() == whole("Authentication credentials were not provided.")
    assert "WWW-Authenticate" in response


def test_a_403_has_the_one_shape():
    client = APIClient()
    client.force_authenticate(factories.user("researcher"))
    response = client.post("/api/conversations/import/", {}, format="multipart")
    assert response.status_code == 403
    assert response.json() == whole("Only staff may do this.")


def test_a_404_of_an_object_has_the_one_shape():
    response = APIClient().get("/api/systems/no-such-system/")
    assert response.status_code == 404
    assert response.json() == whole("No System matches the given query.")


def test_a_path_of_no_api_route_answers_json_in_the_one_shape():
    response = APIClient().get("/api/no-such-route/")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json() == whole("Not found.")


def test_a_path_of_no_api_route_answers_json_with_debug_on_too(settings):
    settings.DEBUG = True  # `make run`: Django's technical 404 page would answer otherwise

    response = APIClient().get("/api/no-such-route/")

    assert response.status_code == 404
    assert response.json() == whole("Not found.")


def test_a_post_to_a_path_of_no_api_route_gets_the_404_not_the_csrf_page():
    client = APIClient(enforce_csrf_checks=True)

    response = client.post("/api/campaigns/caf\u00e9/crowd/finish/", {}, format="json")

    assert response.status_code == 404
    assert response.json() == whole("Not found.")


def test_a_path_under_the_api_without_its_slash_is_still_redirected():
    response = APIClient().get("/api/systems")

    assert response.status_code == 301
    assert response["Location"] == "/api/systems/"


def test_a_path_of_no_page_keeps_the_html_404():
    response = APIClient().get("/no-such-page/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


def test_a_server_error_under_the_api_answers_json_in_the_one_shape():
    from django.test import RequestFactory

    from evalhub.api.handlers import server_error

    response = server_error(RequestFactory().get("/api/systems/"))
    assert response.status_code == 500
    assert json.loads(response.content) == whole("Server error.")


def test_a_405_has_the_one_shape():
    response = APIClient().delete("/api/systems/")
    assert response.status_code == 405
    assert response.json() == whole('Method "DELETE" not allowed.')


def test_a_406_has_the_one_shape():
    response = APIClient().get("/api/systems/", HTTP_ACCEPT="application/xml")
    assert response.status_code == 406
    assert response.json()["error_count"] == 1
    assert "Accept" in response.json()["errors"][0]["message"]


def test_a_415_has_the_one_shape():
    client = APIClient()
    client.force_authenticate(factories.user("researcher"))
    response = client.post("/api/systems/", "slug=a", content_type="text/plain")
    assert response.status_code == 415
    assert response.json() == whole('Unsupported media type "text/plain" in request.')


def test_a_body_that_does_not_parse_is_a_400_in_the_one_shape():
    client = APIClient()
    client.force_authenticate(factories.user("researcher"))
    response = client.post("/api/systems/", "{not json", content_type="application/json")
    assert response.status_code == 400
    body = response.json()
    assert body["error_count"] == 1
    assert body["errors"][0]["line"] is None
    assert body["errors"][0]["message"].startswith("JSON parse error")
    assert not System.objects.exists()


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


def test_an_error_of_an_export_is_answered_in_json_not_in_the_file_format():
    client = APIClient()
    client.force_authenticate(factories.user("researcher"))
    response = client.get("/api/campaigns/no-such-campaign/export/csv/?format=csv")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json() == whole("No Campaign matches the given query.")


@pytest.mark.parametrize(
    ("handler", "status", "message"),
    [
        ("bad_request", 400, "Bad request."),
        ("permission_denied", 403, "Only staff may."),
        ("page_not_found", 404, "Not found."),
    ],
)
def test_django_s_own_errors_under_the_api_answer_the_one_shape(handler, status, message):
    from django.core.exceptions import PermissionDenied
    from django.test import RequestFactory

    from evalhub.api import handlers

    request = RequestFactory().get("/api/systems/")
    response = getattr(handlers, handler)(request, PermissionDenied("Only staff may."))
    assert response.status_code == status
    assert json.loads(response.content) == whole(message)
    page = getattr(handlers, handler)(RequestFactory().get("/systems/"), PermissionDenied())
    assert page["Content-Type"].startswith("text/html")
