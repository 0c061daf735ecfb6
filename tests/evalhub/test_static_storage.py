"""The static files storage (evalhub/static_storage.py) answers WhiteNoise's URLs, working
each out once."""

from unittest import mock

import pytest
from django.test import override_settings
from whitenoise.storage import CompressedManifestStaticFilesStorage

from evalhub.static_storage import StaticFilesStorage


@pytest.fixture
def static_root(tmp_path):
    """A collected static root: one stylesheet and the manifest naming its hashed copy."""
    (tmp_path / "css").mkdir()
    (tmp_path / "css" / "site.css").write_text("body {}")
    (tmp_path / "css" / "site.0123456789ab.css").write_text("body {}")
    (tmp_path / "staticfiles.json").write_text(
        '{"version": "1.1", "hash": "x", "paths": {"css/site.css": "css/site.0123456789ab.css"}}'
    )
    return tmp_path


def storages(root):
    return (
        StaticFilesStorage(location=root, base_url="/static/"),
        CompressedManifestStaticFilesStorage(location=root, base_url="/static/"),
    )


@override_settings(DEBUG=False)
def test_urls_are_whitenoises_and_worked_out_once(static_root):
    ours, theirs = storages(static_root)
    with mock.patch.object(ours, "stored_name", wraps=ours.stored_name) as stored_name:
        urls = [ours.url("css/site.css") for _ in range(3)]
    assert urls == [theirs.url("css/site.css")] * 3
    assert urls[0] == "/static/css/site.0123456789ab.css"
    assert stored_name.call_count == 1


@override_settings(DEBUG=False)
def test_a_name_missing_from_the_manifest_raises_every_time(static_root):
    ours, _ = storages(static_root)
    for _ in range(2):
        with pytest.raises(ValueError, match="Missing staticfiles manifest entry"):
            ours.url("js/nowhere.js")


def test_debug_gives_the_unhashed_url_as_whitenoise_does(static_root):
    ours, theirs = storages(static_root)
    with override_settings(DEBUG=False):
        hashed = ours.url("css/site.css")
    with override_settings(DEBUG=True):
        assert ours.url("css/site.css") == theirs.url("css/site.css") == "/static/css/site.css"
    assert hashed == "/static/css/site.0123456789ab.css"


@override_settings(DEBUG=False)
def test_post_process_forgets_the_urls(static_root):
    ours, _ = storages(static_root)
    ours.url("css/site.css")
    assert list(ours.post_process({}, dry_run=True)) == []
    ours.hashed_files["css/site.css"] = "css/site.fedcba987654.css"
    assert ours.url("css/site.css") == "/static/css/site.fedcba987654.css"
