import json, re
import pytest
from rest_framework.test import APIClient
from rest_framework.authtoken.models import Token
from tests import factories
from tests.annotation.builders import ab_campaign

pytestmark = pytest.mark.django_db

def test_probe(client):
    user = factories.user("r1")
    ps = factories.prompt_set(2, slug="fuzz-set")
    system = factories.system(user, slug="fuzz-bot", name="Fuzz Bot")
    factories.submission(system, ps)
    ab_campaign(4, slug="fuzz-campaign", owner=user)
    api = APIClient(raise_request_exception=False)
    api.force_authenticate(user)
    schema = api.get("/api/schema/?format=json").json()
    bad = []
    for path, ops in schema["paths"].items():
        for method, op in ops.items():
            if method != "get":
                continue
            params = op.get("parameters", [])
            url = re.sub(r"\{[^}]+\}", "a%00b", path)
            r = api.get(url)
            if r.status_code >= 500: bad.append(("path", url, r.status_code))
            real = re.sub(r"\{slug\}", "fuzz-bot", path)
            for p in params:
                if p["in"] == "query":
                    u = re.sub(r"\{[^}]+\}", "fuzz-campaign" if "campaign" in path else "fuzz-bot", path)
                    r = api.get(u, {p["name"]: "a\x00b"})
                    if r.status_code >= 500: bad.append(("query", u, p["name"], r.status_code))
    for b in bad: print(b)
    print(len(bad))
