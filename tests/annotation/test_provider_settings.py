"""A campaign's provider_config, declared per crowd provider (annotation/provider_settings.py)."""

import pytest
from django.core.exceptions import ValidationError

from annotation.crowd import get_provider
from annotation.models import Campaign
from annotation.provider_settings import SCHEMAS, provider_config
from evalhub.declared import DeclaredInvalid
from tests.annotation.builders import ab_campaign

pytestmark = pytest.mark.django_db


def test_every_provider_has_a_declared_config():
    assert set(SCHEMAS) == set(Campaign.Provider.values)


def test_a_provider_reads_its_config_with_the_defaults_filled_in():
    c = ab_campaign(2, provider="prolific", provider_config={"minutes_per_batch": 8})

    config = get_provider("prolific").config(c)

    assert config["minutes_per_batch"] == 8
    assert config["currency"] == "GBP"
    assert config["device_compatibility"] == ["desktop"]


def test_mturk_defaults_are_the_qualifications_it_always_asked_for():
    config = provider_config("mturk", {})
    assert (config["min_approval_rate"], config["min_approved_hits"]) == (95, 100)


def test_an_undeclared_key_is_refused_by_name():
    with pytest.raises(DeclaredInvalid) as refused:
        provider_config("prolific", {"minutes_per_btach": 8})
    assert "minutes_per_btach" in refused.value.errors


def test_a_value_out_of_range_is_refused():
    with pytest.raises(DeclaredInvalid) as refused:
        provider_config("mturk", {"min_approval_rate": 101})
    assert set(refused.value.errors) == {"min_approval_rate"}


def test_the_admin_form_check_refuses_a_bad_config_and_stores_nothing():
    c = ab_campaign(2, provider="mturk")
    c.provider_config = {"min_approval_rate": "high"}

    with pytest.raises(ValidationError) as refused:
        c.full_clean()

    assert "min_approval_rate" in str(refused.value.message_dict["provider_config"])
    c.refresh_from_db()
    assert c.provider_config == {}


def test_a_remembered_platform_id_is_stored_and_an_undeclared_one_refused():
    c = ab_campaign(2, provider="prolific")
    provider = get_provider("prolific")

    provider._save_config(c, block_group_id="group1")
    with pytest.raises(DeclaredInvalid):
        provider._save_config(c, study_secret="x")

    c.refresh_from_db()
    assert c.provider_config == {"block_group_id": "group1"}
