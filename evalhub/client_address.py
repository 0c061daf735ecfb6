"""The client's address: the one place that works it out, for login lockouts (django-axes,
through AXES_CLIENT_IP_CALLABLE) and every per-address limit (evalhub/ratelimit.py).

Behind EVALHUB_TRUSTED_PROXY_COUNT reverse proxies the connection comes from the last proxy,
and each proxy appended the address it saw to X-Forwarded-For. Only those last entries are
trustworthy: anything to their left is whatever the client sent. So the client is the entry
that many places from the right of X-Forwarded-For followed by the connection's address.
With no proxy the header is ignored, so a client cannot choose its address by sending it.

django-ipware reads the header, with python-ipware's frozen "legacy" engine: it splits on
commas as X-Forwarded-For is written. The default ("modern") engine honours quotes, so a
client that sends `1.2.3.4, "` swallows the entry its proxy appends and is taken for
1.2.3.4 (tests/evalhub/test_client_address.py keeps that shut).
"""

from django.conf import settings
from ipware.ip import get_client_ip


def client_address(request) -> str:
    """The address of the client that sent `request` (the connection's own address when the
    forwarded one is missing or unreadable: a request that did not come through the proxies)."""
    connection = request.META.get("REMOTE_ADDR", "")
    proxies = settings.EVALHUB_TRUSTED_PROXY_COUNT
    if proxies == 0:
        return connection
    # ipware counts the proxies whose addresses are in the header; the nearest one's is the
    # connection's, not in it.
    forwarded, _routable = get_client_ip(
        request,
        proxy_order="left-most",
        proxy_count=proxies - 1,
        request_header_order=["HTTP_X_FORWARDED_FOR"],
        strict=False,
        algorithm="legacy",
    )
    return forwarded or connection
