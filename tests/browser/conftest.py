"""Headless Chromium (Debian's package) driven by Playwright against pytest-django's live server.

Without Chromium the browser tests skip with a reason; with EVALHUB_REQUIRE_BROWSER set
(CI installs Chromium and sets it) a missing browser is a failure.
"""

import os
from pathlib import Path

import pytest

from tests.services import required

CHROMIUM = os.environ.get("EVALHUB_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
# This machine has no network but loopback: keep Chromium from phoning home at start.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/browser/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser():
    if not os.access(CHROMIUM, os.X_OK):
        reason = f"Chromium not found at {CHROMIUM}: install Debian's chromium to run browser tests"
        if required("EVALHUB_REQUIRE_BROWSER"):
            pytest.fail(f"EVALHUB_REQUIRE_BROWSER is set but {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop on this thread; the ORM calls the tests
    # make between browser steps are still synchronous, so Django may allow them.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()
    if previous is None:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    else:
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def page(browser, live_server):
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1200, "height": 900})
    context.set_default_timeout(15_000)
    page = context.new_page()
    # Every page runs under the Content-Security-Policy: anything it refuses (an inline
    # script, style or handler) is reported on the console and fails the test.
    refused = []
    page.on(
        "console",
        lambda message: (
            "Content Security Policy" in message.text
            and refused.append(f"{message.location.get('url')}: {message.text[:120]}")
        ),
    )
    yield page
    context.close()
    assert not refused, f"the Content-Security-Policy refused: {refused}"


@pytest.fixture
def screenshot(page):
    """Save a full-page screenshot under test-artifacts/ (the docs' pictures come from here)."""

    def take(name: str) -> Path:
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take
