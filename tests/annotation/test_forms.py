"""The campaign form: campaign settings and task configs checked against their declared
schemas (annotation/campaign_settings.py, each kind's `config_schema`), with each
setting's default and range shown."""

import json

import pytest

from annotation.campaign_settings import CampaignSettings, settings_errors
from annotation.forms import CampaignForm, kind_summaries
from annotation.models import Campaign
from evalhub.declared import check
from tests import factories
from tests.annotation.test_manage import form_data, url

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(client):
    client.force_login(factories.user("boss", staff=True))
    return client


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("redundancy", 0, "greater than or equal to 1"),
        ("redundancy", 51, "less than or equal to 50"),
        ("batch_size", 0, "greater than or equal to 1"),
        ("batch_size", 201, "less than or equal to 200"),
        ("gold_per_batch", -1, "greater than or equal to 0"),
        ("gold_per_batch", 21, "less than or equal to 20"),
        ("max_batches_per_worker", 0, "greater than or equal to 1"),
        ("max_batches_per_worker", 1001, "less than or equal to 1000"),
        ("time_limit_minutes", 0, "greater than or equal to 1"),
        ("time_limit_minutes", 1441, "less than or equal to 1440"),
        ("reward_per_batch", "10000.01", "less than or equal to 10000"),
        ("training_threshold", 101, "less than or equal to 100"),
    ],
)
def test_campaign_settings_out_of_range_are_refused_next_to_their_field(field, value, message):
    form = CampaignForm(form_data(**{field: value}))
    assert not form.is_valid()
    assert message in " ".join(form.errors[field])


@pytest.mark.parametrize(
    ("given", "field", "message"),
    [
        ({"redundancy": 0}, "redundancy", "redundancy must be from 1 to 50, got 0"),
        ({"time_limit_minutes": 10**6}, "time_limit_minutes", "from 1 to 1440"),
        ({"gold_per_batch": "1"}, "gold_per_batch", "must be a whole number, got '1'"),
    ],
)
def test_the_campaign_schema_names_the_setting_and_its_range(given, field, message):
    errors = settings_errors(given)
    assert list(errors) == [field] and message in errors[field]


def test_the_campaign_schema_defaults_are_the_models_defaults():
    defaults = check(CampaignSettings, {})
    empty = Campaign()
    for name, value in defaults.items():
        if name != "gold_per_batch":  # a form field, not stored on the campaign
            assert str(getattr(empty, name)) == str(value), name


def test_the_form_shows_each_settings_default_and_range():
    form = CampaignForm()
    assert "Range from 1 to 50." in form.fields["redundancy"].help_text
    assert "Default 3." in form.fields["redundancy"].help_text
    assert form.fields["time_limit_minutes"].widget.attrs["max"] == 1440


def test_a_config_typo_is_refused_on_the_config_field(staff):
    response = staff.post(
        url("manage-campaign-create"),
        form_data(task_kind="likert", task_config=json.dumps({"levle": "turn"})),
    )
    html = response.content.decode()
    config_field = html.split('name="task_config"')[1].split("</div>")[0]
    assert "&#x27;levle&#x27; is an unknown Likert config key" in config_field
    assert not Campaign.objects.exists()


def test_the_page_lists_every_kinds_config_keys_with_default_and_range(staff):
    summaries = {s["key"]: s for s in kind_summaries()}
    comparative = {row["name"]: row for row in summaries["comparative"]["keys"]}
    assert comparative["max_pairs"]["range"] == "from 1 to 10000"
    assert comparative["max_pairs"]["default"] == "200"
    html = staff.get(url("manage-campaign-create")).content.decode()
    assert "<code>max_pairs</code>" in html and "from 1 to 10000" in html
    assert "<code>behaviour_task</code>" in html and "required" in html


# Issue 23, finding 1: the form's references name only what its user may see ----------------


def test_another_owners_private_system_is_no_choice_like_an_absent_one():
    researcher = factories.user("researcher")
    factories.system(factories.user("carol"), slug="carols", visibility="private")
    hidden = CampaignForm(form_data(system="carols"), user=researcher)
    absent = CampaignForm(form_data(system="nobodys"), user=researcher)
    assert not hidden.is_valid() and not absent.is_valid()
    assert hidden.errors["system"] == absent.errors["system"]
    assert not Campaign.objects.exists()


def test_another_owners_chat_campaign_is_no_choice():
    researcher = factories.user("researcher")
    Campaign.objects.create(
        slug="carols-chats", title="Carol's chats", task_kind="chat", owner=factories.user("carol")
    )
    form = CampaignForm(form_data(chat_campaign="carols-chats"), user=researcher)
    assert not form.is_valid() and "chat_campaign" in form.errors
    assert Campaign.objects.count() == 1
