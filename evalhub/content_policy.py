"""django-csp's middleware, with the policy built once per set of per-response overrides
instead of on every response.

django-csp rebuilds the Content-Security-Policy header for each response, deep-copying its
parts (``dataclasses.asdict``) and the site's directives, twice (the policy and the
report-only one): about 6% of a crowdworker's judgment (bench/profile_serving.py). Without
a nonce the header depends only on the settings and on the response's overrides
(``_csp_config``, ``_csp_update``, ``_csp_replace``, e.g. a task page's frame-ancestors),
so it is kept per overrides. A response whose request used its nonce is built as django-csp
builds it; so are overrides of any other shape than strings and lists or tuples of strings
(a set, a lazy string), which are rare and cheap to leave alone.
"""

import http.client as http_client
from dataclasses import asdict

from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.middleware import CheckableLazyObject, CSPMiddleware, PolicyParts
from csp.utils import build_policy
from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

# A few entries: one per distinct set of overrides (the task pages' one per crowd platform).
MAX_ENTRIES = 256

_built: dict[tuple, str] = {}


@receiver(setting_changed)
def _forget(setting, **kwargs):
    """Tests change the site's policy with override_settings; production never does."""
    if setting.startswith("CONTENT_SECURITY_POLICY"):
        _built.clear()


def _frozen(directives) -> tuple | None:
    """Overrides as a key, or raise TypeError when they are not plain strings (whose built
    policy two equal keys could not be trusted to share)."""
    if directives is None:
        return None
    if type(directives) is not dict:
        raise TypeError(directives)
    items = []
    for name, value in directives.items():
        if type(name) is not str:
            raise TypeError(name)
        if value is None or type(value) in (str, bool):
            items.append((name, value))
        elif type(value) in (list, tuple) and all(type(v) is str for v in value):
            items.append((name, tuple(value)))
        else:
            raise TypeError(value)
    return tuple(items)


def policy(parts: PolicyParts, report_only: bool) -> str:
    """The header django-csp's ``build_policy`` makes of these parts."""
    if parts.nonce is None:
        try:
            key = (
                report_only,
                _frozen(parts.config),
                _frozen(parts.update),
                _frozen(parts.replace),
            )
        except TypeError:
            key = None
        if key is not None:
            header = _built.get(key)
            if header is None:
                header = build_policy(**asdict(parts), report_only=report_only)
                if len(_built) < MAX_ENTRIES:
                    _built[key] = header
            return header
    return build_policy(**asdict(parts), report_only=report_only)


class CachedCSPMiddleware(CSPMiddleware):
    """django-csp 4.0's ``process_response`` with ``policy`` above for ``build_policy``."""

    def process_response(self, request, response):
        exempted_debug_codes = (http_client.INTERNAL_SERVER_ERROR, http_client.NOT_FOUND)
        if response.status_code in exempted_debug_codes and settings.DEBUG:
            return response

        for report_only, header, setting, exempt in (
            (False, HEADER, "CONTENT_SECURITY_POLICY", "_csp_exempt"),
            (True, HEADER_REPORT_ONLY, "CONTENT_SECURITY_POLICY_REPORT_ONLY", "_csp_exempt_ro"),
        ):
            parts = self.get_policy_parts(
                request=request, response=response, report_only=report_only
            )
            csp = policy(parts, report_only)
            if not csp:
                continue
            is_not_exempt = getattr(response, exempt, False) is False
            no_header = header not in response
            prefixes = (getattr(settings, setting, None) or {}).get("EXCLUDE_URL_PREFIXES") or ()
            is_not_excluded = not request.path_info.startswith(tuple(prefixes))
            if no_header and is_not_exempt and is_not_excluded:
                response[header] = csp

        # As django-csp: the nonce may not be asked for once the header is written.
        if getattr(request, "_csp_nonce", None) is None:
            request.csp_nonce = CheckableLazyObject(self._csp_nonce_post_response)
        return response
