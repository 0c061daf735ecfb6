"""The campaign export as a Hugging Face dataset: judgments of every kind load with
`datasets`, carry what the JSONL export carries, and only for those who may download it."""

import json

import pytest
from django.urls import reverse

from annotation import export
from annotation.models import Campaign
from tests import factories
from tests.datasets_loading import demo, download, front_matter, load_table, unzip  # noqa: F401

pytestmark = pytest.mark.django_db

# The demo judges these kinds: simulated workers (ABC-Eval, Likert, comparative) and the
# simulated tournaments (Spot The Bot, A/B).
JUDGED_KINDS = ["abc_eval", "likert", "comparative", "spot_the_bot", "ab"]


def judged(kind: str) -> Campaign:
    return next(c for c in Campaign.objects.filter(task_kind=kind) if c.judgments.exists())


def export_url(campaign, **params) -> str:
    url = reverse("annotation:manage-campaign-export-dataset", args=[campaign.slug])
    return url + ("?" + "&".join(f"{k}={v}" for k, v in params.items()) if params else "")


@pytest.mark.parametrize("kind", JUDGED_KINDS)
def test_every_kinds_judgments_load_with_datasets(client, demo, kind, tmp_path):
    campaign = judged(kind)
    client.force_login(factories.user(staff=True))
    files = unzip(download(client.get(export_url(campaign, license="cc-by-4.0"))), tmp_path)
    assert sorted(files) == ["README.md", "data/judgments.parquet"]
    loaded = load_table(tmp_path, "judgments", tmp_path / "cache")
    rows = list(export.export_rows(campaign, platform_ids=True))
    assert loaded.num_rows == len(rows) == campaign.judgments.count()
    assert loaded.column_names == list(rows[0])
    # Nested values come back as their JSON text; scalars as they were.
    first = loaded[0]
    for key, value in rows[0].items():
        got = first[key]
        assert (json.loads(got) if isinstance(value, dict | list) else got) == value
