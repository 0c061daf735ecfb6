"""Leaderboard pieces for other apps' templates, so their views need no change.

- ``{% system_results system %}``: the system's rank and survival curve in every tournament
  it entered whose results the viewer may see (the system profile page);
- ``{% tournament_results tournament %}``: a tournament's latest results (the tournament
  page's ``results`` block), or a note that there are none yet;
- ``value|stat:digits``: a number with that many decimals, or a dash for null (NaN).
"""

from django import template

from analysis.leaderboards import (
    latest_succeeded_run,
    plot_url,
    results_context,
    results_for_system,
)

register = template.Library()


@register.inclusion_tag("analysis/_system_results.html", takes_context=True)
def system_results(context, system):
    return {"entries": results_for_system(system, context["request"].user), "system": system}


@register.inclusion_tag("analysis/_tournament_results.html", takes_context=True)
def tournament_results(context, tournament):
    user = context["request"].user
    run = latest_succeeded_run(tournament) if tournament.is_visible_to(user) else None
    return results_context(tournament, run)


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


@register.filter
def percent(value, digits=0):
    """A share in [0, 1] as a percentage, a dash when missing."""
    if value is None:
        return "–"
    return f"{100 * float(value):.{int(digits)}f}%"


@register.simple_tag
def plot_src(run, name):
    """URL of one of the run's stored plots."""
    return plot_url(run, name)
