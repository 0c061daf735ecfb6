"""Issue 14 in a browser: a slug proposed as the name is typed, an error summary that links
to its field, the campaign page's oversight, the preview's walk through the items, the
notices page and the account page's notice choices, and a list searched and sorted."""

from decimal import Decimal

import pytest
from playwright.sync_api import expect

from annotation.models import Campaign
from evalhub.models import NoticeKind, NoticePreference
from evalhub.notifications import notify
from tests import factories
from tests.annotation.builders import ab_campaign
from tests.annotation.test_progress import NOW, judge, shown

pytestmark = pytest.mark.django_db(transaction=True)


def log_in(page, username, password):
    page.goto("/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.get_by_role("button", name="Log in").click()


def test_a_slug_follows_the_name_and_errors_link_to_their_field(page):
    factories.user("ann", password="Ann-Password-1")
    factories.system(slug="taken-bot", name="Taken")
    log_in(page, "ann", "Ann-Password-1")
    page.goto("/systems/new/")
    page.fill("#id_name", "My Great Bot!")
    assert page.input_value("#id_slug") == "my-great-bot"  # static/js/slug.js
    page.fill("#id_slug", "Bad_Slug")
    page.get_by_role("button", name="Register").click()
    summary = page.locator(".error-summary")
    assert "single hyphens" in summary.inner_text()
    summary.get_by_role("link", name="Slug").click()
    assert page.evaluate("location.hash") == "#id_slug"


def test_staff_oversee_a_campaign_and_walk_through_its_preview(page, screenshot):
    factories.user("boss", staff=True, password="Boss-Password-1")
    c = ab_campaign(
        4,
        redundancy=1,
        batch_size=2,
        reward_per_batch=Decimal("1"),
        budget=Decimal("10"),
        status="draft",
    )
    Campaign.objects.filter(pk=c.pk).update(launched_at=NOW)
    judge(shown(c)[0], "w1", at=NOW)
    log_in(page, "boss", "Boss-Password-1")
    page.goto(c.get_absolute_url())
    assert "of a budget of 10.00" in page.get_by_test_id("spent").inner_text()
    assert page.locator(".oversight svg polyline").count() == 1
    screenshot("admin-campaign-oversight")
    page.get_by_role("button", name="Resume").click()
    page.get_by_role("link", name="Cancel").click()
    assert Campaign.objects.get(pk=c.pk).status == "draft"
    page.goto(f"/manage/campaigns/{c.slug}/preview/0/")
    seen = 1
    while page.get_by_role("link", name="Next item →").count():
        assert "preview item" in page.locator(".preview-nav").inner_text().lower()
        page.get_by_role("link", name="Next item →").click()
        seen += 1
    assert seen == c.items.filter(auto_payload__isnull=True).count()
    page.get_by_role("link", name="Back to the campaign").click()
    assert page.url.endswith(c.get_absolute_url())


def test_notices_are_read_and_chosen(page):
    user = factories.user("nina", password="Nina-Password-1")
    notify(
        user, NoticeKind.SUBMISSION_SCORED, "Your submission of Bot on Set was scored.", "/systems/"
    )
    log_in(page, "nina", "Nina-Password-1")
    page.get_by_role("link", name="Notices (1)").click()
    assert "was scored" in page.locator(".notices").inner_text()
    page.get_by_role("button", name="Mark all as read").click()
    assert page.get_by_role("link", name="Notices", exact=True).is_visible()
    page.goto("/accounts/profile/")
    page.get_by_label("A submission of mine was scored: by email").uncheck()
    page.get_by_role("button", name="Save notice choices").click()
    pref = NoticePreference.objects.get(user=user, kind=NoticeKind.SUBMISSION_SCORED)
    assert (pref.on_site, pref.by_email) == (True, False)


def test_a_list_is_searched_and_sorted_without_javascript(page):
    for name in ("Alpha", "Beta", "Gamma"):
        factories.system(name=name)
    page.goto("/systems/")
    page.fill("#list-q", "a")
    page.select_option("#list-sort", "-name")
    page.get_by_role("button", name="Show").click()
    # The form is a plain GET: wait for the new page, not the old one's rows.
    page.wait_for_url("**sort=-name**")
    expect(page.locator("tbody tr td:first-child a")).to_have_text(["Gamma", "Beta", "Alpha"])
    expect(page.locator(".list-count")).to_contain_text("3 found")


def test_staff_search_and_sort_a_campaigns_judgments(page):
    factories.user("boss", staff=True, password="Boss-Password-1")
    c = ab_campaign(4, redundancy=1, batch_size=2)
    items = shown(c)
    judge(items[0], "alice", at=NOW)
    judge(items[1], "bruno", at=NOW)
    log_in(page, "boss", "Boss-Password-1")
    page.goto(c.get_absolute_url())
    page.get_by_role("link", name="Judgments").first.click()
    assert page.locator("table.judgments tbody tr").count() == 2
    page.fill("#list-q", "bruno")
    page.get_by_role("button", name="Show").click()
    page.wait_for_url("**q=bruno**")
    rows = page.locator("table.judgments tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("bruno")
    expect(page.locator(".list-count")).to_contain_text("1 found")
