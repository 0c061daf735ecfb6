"""The evidence behind a report card: ``/leaderboards/systems/<slug>/behaviours/<label>/``,
the system's bot turns that annotators flagged with one behaviour (analysis/pages/report_card.py).

The system must be visible to the viewer (private and embargoed systems do not exist for
others), and only judgments of campaigns the viewer may manage count, as on result pages.
"""

from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from analysis.pages.report_card import EVIDENCE_LIMIT, flagged_turns
from evalhub.models import System
from evalhub.permissions import visible_or_404


@require_GET
def behaviour_evidence(request, slug, label):
    system = get_object_or_404(System, slug=slug)
    visible_or_404(request.user, system, "No such system.")
    turns, total = flagged_turns(system, label, request.user)
    return render(
        request,
        "analysis/behaviour_evidence.html",
        {"system": system, "label": label, "turns": turns, "total": total, "limit": EVIDENCE_LIMIT},
    )
