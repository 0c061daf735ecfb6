"""The client's address behind EVALHUB_TRUSTED_PROXY_COUNT proxies: X-Forwarded-For decides
it only through trusted proxies, and counted from the right, so a client cannot choose it;
every reader of the address (django-axes, the rate limits, DRF's throttles) agrees."""

import pytest
from axes.helpers import get_client_ip_address
from django.conf import settings as django_settings
from django.test import RequestFactory
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from evalhub.client_address import client_address

PROXY = "10.0.0.2"  # the HTTPS proxy's address, as the web process sees the connection


def request(forwarded_for=None, remote=PROXY):
    headers = {"HTTP_X_FORWARDED_FOR": forwarded_for} if forwarded_for is not None else {}
    return RequestFactory().get("/", REMOTE_ADDR=remote, **headers)


def test_without_proxies_the_connection_decides_and_the_header_is_ignored(settings):
    settings.EVALHUB_TRUSTED_PROXY_COUNT = 0
    assert client_address(request("203.0.113.7", remote="198.51.100.1")) == "198.51.100.1"
    assert client_address(request(None, remote="198.51.100.1")) == "198.51.100.1"


def test_behind_one_proxy_the_address_it_appended_decides(settings):
    settings.EVALHUB_TRUSTED_PROXY_COUNT = 1
    assert client_address(request("203.0.113.7")) == "203.0.113.7"
    assert client_address(request("2001:db8::7")) == "2001:db8::7"


def test_behind_one_proxy_what_the_client_sent_cannot_choose_its_address(settings):
    settings.EVALHUB_TRUSTED_PROXY_COUNT = 1
    # The client sent the left part; the proxy appended ", 203.0.113.7".
    for sent in ("1.2.3.4", "1.2.3.4, 5.6.7.8", "not-an-address", "1.2.3.4, ", '1.2.3.4, "'):
        assert client_address(request(f"{sent}, 203.0.113.7")) == "203.0.113.7", sent


def test_behind_two_proxies_the_second_entry_from_the_right_decides(settings):
    settings.EVALHUB_TRUSTED_PROXY_COUNT = 2
    # The outer proxy appended the client, the inner one the outer proxy's address.
    assert client_address(request("1.2.3.4, 203.0.113.7, 192.0.2.10")) == "203.0.113.7"


def test_a_request_that_did_not_come_through_the_proxies_gets_the_connections_address(
    settings,
):
    settings.EVALHUB_TRUSTED_PROXY_COUNT = 2
    assert client_address(request("203.0.113.7")) == PROXY  # one entry short
    settings.EVALHUB_TRUSTED_PROXY_COUNT = 1
    assert client_address(request(None)) == PROXY
    assert client_address(request("garbage")) == PROXY


def test_no_ipware_setting_overrides_the_arguments():
    # django-ipware's legacy engine lets these settings win over the arguments given.
    assert not [name for name in dir(django_settings) if name.startswith("IPWARE_")]


@pytest.mark.parametrize("proxies", [0, 1, 2])
@pytest.mark.parametrize(
    "forwarded_for",
    [None, "203.0.113.7", "1.2.3.4, 203.0.113.7", "1.2.3.4, 203.0.113.7, 192.0.2.10"],
)
def test_lockouts_limits_and_throttles_read_the_same_address(settings, proxies, forwarded_for):
    settings.EVALHUB_TRUSTED_PROXY_COUNT = proxies
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": proxies}
    req = request(forwarded_for)
    expected = client_address(req)
    assert get_client_ip_address(req) == expected  # django-axes
    if forwarded_for is None or len(forwarded_for.split(",")) >= proxies:
        assert BaseThrottle().get_ident(Request(req)) == expected  # DRF


def test_the_settings_derive_axes_and_drf_from_the_one_setting():
    assert django_settings.AXES_CLIENT_IP_CALLABLE == "evalhub.client_address.client_address"
    assert (
        django_settings.REST_FRAMEWORK["NUM_PROXIES"] == django_settings.EVALHUB_TRUSTED_PROXY_COUNT
    )
