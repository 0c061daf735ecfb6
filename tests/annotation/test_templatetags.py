"""The home page's "annotate now" section comes from annotation's template tag."""

import pytest

from tests.annotation.builders import campaign

pytestmark = pytest.mark.django_db


def test_home_lists_live_campaigns_open_to_anyone_with_the_link(client):
    live = campaign("ab", title="Open A/B study")
    draft = campaign("ab", status="draft", title="Draft study")
    on_prolific = campaign("likert", provider="prolific", title="Prolific study")
    html = client.get("/").content.decode()
    assert "Take part: annotate now" in html
    assert live.start_url() in html and "Open A/B study" in html
    assert "Draft study" not in html and draft.start_url() not in html
    assert "Prolific study" not in html and on_prolific.start_url() not in html


def test_home_has_no_annotate_section_without_live_campaigns(client):
    campaign("ab", status="finished", title="Finished study")
    html = client.get("/").content.decode()
    assert "Take part: annotate now" not in html
    assert "Finished study" not in html
