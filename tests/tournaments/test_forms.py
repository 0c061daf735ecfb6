"""The tournament forms take their settings' ranges, defaults and help from the declared
schemas (tournaments/tournament_settings.py), show them and enforce them."""

import pytest
from django.urls import reverse

from tests import factories
from tournaments.forms import ABForm, SpotTheBotForm
from tournaments.models import Tournament

pytestmark = pytest.mark.django_db


def spot_data(**overrides):
    data = {
        "name": "Garden cup",
        "slug": "garden-cup",
        "domain": "garden",
        "systems": ["a", "b"],
        "schedule": "all-play-all",
        "conversations_per_pair": "5",
        "exchanges": "5",
        "segment_lengths": "2, 3",
        "human_share": "0.1",
        "features": "sensibleness, fluency",
        "batch_size": "10",
        "max_batches_per_worker": "3",
        "judgments_per_segment": "2",
    }
    return {**data, **overrides}


@pytest.fixture
def researcher():
    for slug in ("a", "b"):
        factories.system(None, slug=slug)
    return factories.user("researcher")


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("conversations_per_pair", "0", "greater than or equal to 1"),
        ("conversations_per_pair", "5000000", "less than or equal to 1000"),
        ("exchanges", "0", "greater than or equal to 1"),
        ("exchanges", "51", "less than or equal to 50"),
        ("batch_size", "0", "greater than or equal to 1"),
        ("batch_size", "201", "less than or equal to 200"),
        ("max_batches_per_worker", "101", "less than or equal to 100"),
        ("judgments_per_segment", "0", "greater than or equal to 1"),
        ("judgments_per_segment", "21", "less than or equal to 20"),
        ("human_share", "-0.1", "greater than or equal to 0"),
        ("segment_lengths", "2, 99", "at most 50"),
        ("segment_lengths", "0", "at least 1"),
    ],
)
def test_spot_the_bot_settings_out_of_range_are_refused(researcher, field, value, message):
    form = SpotTheBotForm(spot_data(**{field: value}), user=researcher)
    assert not form.is_valid()
    assert list(form.errors) == [field]
    assert message in " ".join(form.errors[field])


def test_spot_the_bot_settings_in_range_make_a_tournament(researcher):
    form = SpotTheBotForm(spot_data(batch_size="200", judgments_per_segment="20"), user=researcher)
    assert form.is_valid(), form.errors
    t = form.save()
    assert (t.batch_size, t.judgments_per_segment) == (200, 20)
    assert Tournament.objects.get().owner == researcher


def test_the_form_shows_each_settings_default_and_range(researcher):
    form = SpotTheBotForm(user=researcher)
    batch = form.fields["batch_size"]
    assert "Range from 1 to 200." in batch.help_text and "Default 20." in batch.help_text
    assert batch.widget.attrs["min"] == 1 and batch.widget.attrs["max"] == 200
    assert "Default 2, 3, 5." in form.fields["segment_lengths"].help_text
    html = str(form["conversations_per_pair"]) + form["conversations_per_pair"].help_text
    assert 'max="1000"' in html and "Default 45." in html
    assert form["batch_size"].initial == 20


def ab_data(submission, **overrides):
    data = {
        "name": "Mine",
        "slug": "mine-ab",
        "submission": str(submission.public_id),
        "baselines": ["base"],
        "judgments_per_prompt": "3",
        "prompts_per_batch": "10",
        "reward_per_judgment": "0.05",
    }
    return {**data, **overrides}


@pytest.fixture
def submission():
    owner = factories.user("owner")
    prompts = factories.prompt_set(2, slug="two")
    factories.submission(factories.system(None, slug="base", is_baseline=True), prompts)
    return factories.submission(factories.system(owner, slug="mine"), prompts)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("judgments_per_prompt", "0", "greater than or equal to 1"),
        ("judgments_per_prompt", "21", "less than or equal to 20"),
        ("prompts_per_batch", "0", "greater than or equal to 1"),
        ("prompts_per_batch", "101", "less than or equal to 100"),
        ("reward_per_judgment", "-1", "greater than or equal to 0"),
        ("reward_per_judgment", "101", "less than or equal to 100"),
    ],
)
def test_ab_settings_out_of_range_are_refused(submission, field, value, message):
    form = ABForm(ab_data(submission, **{field: value}), user=submission.system.owner)
    assert not form.is_valid()
    assert list(form.errors) == [field]
    assert message in " ".join(form.errors[field])


def test_ab_form_shows_defaults_and_ranges(submission):
    form = ABForm(user=submission.system.owner)
    help_text = form.fields["prompts_per_batch"].help_text
    assert "Range from 1 to 100." in help_text and "Default 10." in help_text
    assert "Range from 0 to 100." in form.fields["reward_per_judgment"].help_text
    assert ABForm(ab_data(submission), user=submission.system.owner).is_valid()


def test_the_create_pages_show_the_defaults_and_ranges(client, researcher):
    client.force_login(researcher)
    spot = client.get(reverse("tournaments:create-spot-the-bot")).content.decode()
    assert "Segments per batch (one sitting). Range from 1 to 200. Default 20." in spot
    assert 'name="batch_size" value="20" min="1" max="200"' in spot
    ab = client.get(reverse("tournaments:create-ab")).content.decode()
    assert "Comparisons per batch. Range from 1 to 100. Default 10." in ab
