"""Leaderboard pieces for other apps' templates, so their views need no change.

- ``{% system_results system %}``: the system's rank and survival curve in every tournament
  it entered whose results the viewer may see (the system profile page);
- ``{% system_report_card system %}``: every evaluation the system took part in that the
  viewer may see, with its strengths and weaknesses and links to the evidence;
- ``{% tournament_results tournament %}``: a tournament's latest results (the tournament
  page's ``results`` block), or a note that there are none yet;
- ``{% human_vs_automatic tournament %}``: the target ranking by the humans and by an
  automatic judge and their correlation (the latest comparison of a judge run on the
  tournament's campaign), and a link to the campaign's human-versus-automatic page;
- ``{% campaign_results_links campaign %}``: links to a campaign's results page, its
  study's page and its human-versus-automatic page (the staff campaign page);
- ``value|stat:digits``: a number with that many decimals, or a dash for null (NaN);
- ``p|pvalue``: a p-value with 4 decimals, "< 0.0001" below that, a dash for null;
  ``p|p_is`` the same inside a sentence ("p = 0.0123", "p < 0.0001").
"""

from django import template
from django.urls import reverse

from analysis.pages.comparisons import may_compare, tournament_comparison
from analysis.pages.leaderboards import (
    latest_succeeded_run,
    plot_url,
    results_context,
    results_for_system,
)
from analysis.pages.report_card import evaluations
from analysis.pages.results import RESULT_KINDS
from evalhub.permissions import is_managed_by

register = template.Library()


@register.inclusion_tag("analysis/_system_results.html", takes_context=True)
def system_results(context, system):
    return {"entries": results_for_system(system, context["request"].user), "system": system}


@register.inclusion_tag("analysis/_report_card.html", takes_context=True)
def system_report_card(context, system):
    return {"evaluations": evaluations(system, context["request"].user), "system": system}


@register.inclusion_tag("analysis/_tournament_results.html", takes_context=True)
def tournament_results(context, tournament):
    user = context["request"].user
    run = latest_succeeded_run(tournament) if tournament.is_visible_to(user) else None
    # The request goes on to the tags inside (human_vs_automatic).
    return {**results_context(tournament, run), "request": context["request"]}


@register.filter
def stat(value, digits=3):
    """``value`` rounded to ``digits`` decimals; a dash when it is missing (null/NaN)."""
    if value is None or value == "":
        return "–"
    try:
        number = float(value)
    except (TypeError, ValueError):
        return value
    if number != number:
        return "–"
    return f"{number:.{int(digits)}f}"


P_FLOOR = 0.0001


@register.filter
def pvalue(value, digits=4):
    """A p-value to ``digits`` decimals; below 0.0001, "< 0.0001" rather than "0.0000"."""
    try:
        tiny = float(value) < P_FLOOR  # False for NaN, which `stat` shows as a dash
    except (TypeError, ValueError):
        tiny = False
    return f"< {P_FLOOR:.4f}" if tiny else stat(value, digits)


@register.filter
def p_is(value):
    """A p-value inside a sentence: "p = 0.0123", or "p < 0.0001" for a smaller one."""
    shown = str(pvalue(value))
    return f"p {shown}" if shown.startswith("<") else f"p = {shown}"


@register.filter
def percent(value, digits=0):
    """A share in [0, 1] as a percentage, a dash when missing."""
    if value is None:
        return "–"
    return f"{100 * float(value):.{int(digits)}f}%"


@register.inclusion_tag("analysis/_versus_summary.html", takes_context=True)
def human_vs_automatic(context, tournament):
    user = context["request"].user
    campaign = tournament.campaign if tournament.campaign_id else None
    if campaign is None or not tournament.is_visible_to(user):
        return {}
    compare_url = (
        reverse("results:versus", args=[campaign.slug]) if may_compare(user, campaign) else None
    )
    return {**(tournament_comparison(tournament) or {}), "compare_url": compare_url}


@register.simple_tag
def plot_src(run, name):
    """URL of one of the run's stored plots."""
    return plot_url(run, name)


@register.inclusion_tag("analysis/_campaign_results_links.html", takes_context=True)
def campaign_results_links(context, campaign):
    """Links from a campaign's page to its results and its study's, for those who may see
    them (``{% campaign_results_links campaign %}``)."""
    user = context["request"].user
    return {
        "campaign": campaign,
        "has_results": campaign.task_kind in RESULT_KINDS and is_managed_by(user, campaign),
        "study": campaign.study
        if campaign.study_id and is_managed_by(user, campaign.study)
        else None,
        "may_compare": may_compare(user, campaign),
    }
