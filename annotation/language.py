"""The language a crowdworker's pages speak: the campaign's, or the browser's where the
campaign follows the browser and the browser asks for a language the site has.

Researcher and staff pages stay English, so the site has no LocaleMiddleware: the worker
views activate the language here once they know the campaign, and `in_worker_language`
(on every worker view, through `framed_by_provider`) puts the previous language back
after the view, so that nothing leaks into the next request served by the same thread.
A page with no campaign to ask (a 404 for an unknown assignment) speaks the browser's
language when the site has it.
"""

from django.conf import settings
from django.utils import translation
from django.utils.cache import patch_vary_headers
from django.utils.translation.trans_real import parse_accept_lang_header

LANGUAGE_CODES = tuple(code for code, _ in settings.LANGUAGES)


def browser_language(request) -> str | None:
    """The first language of the browser's Accept-Language the site has, or None."""
    header = request.META.get("HTTP_ACCEPT_LANGUAGE", "")
    for code, _quality in parse_accept_lang_header(header):
        if code == "*":
            break
        try:
            return translation.get_supported_language_variant(code)
        except LookupError:
            continue
    return None


def campaign_language(request, campaign) -> str:
    if campaign.follow_browser and (browser := browser_language(request)):
        return browser
    return campaign.language


def serve_campaign(request, campaign) -> None:
    """Mark `campaign` as the one this worker page serves (its crowd platform may frame
    the page) and speak its language from here on."""
    request.annotation_campaign = campaign
    speak(request, campaign_language(request, campaign))


def speak(request, language: str) -> None:
    translation.activate(language)
    request.LANGUAGE_CODE = translation.get_language()


def spoken_response(request, response):
    """Say which language the page speaks, and that it depends on the browser's header
    where it may (a cache must not hand a German page to a Spanish browser)."""
    language = getattr(request, "LANGUAGE_CODE", None)
    if language:
        response.headers.setdefault("Content-Language", language)
    campaign = getattr(request, "annotation_campaign", None)
    if campaign is None or campaign.follow_browser:
        patch_vary_headers(response, ("Accept-Language",))
    return response
