"""The Alexa Prize metrics page: ``/leaderboards/dialogues/<scope>/<name>/``.

Unlike the leaderboards, this page computes its figures in the request: the metrics are
counts, means and entropies over turns (no resampling), linear in the number of turns, and
scopes larger than ``MAX_CONVERSATIONS`` are refused with a pointer to the
``analyze_dialogues`` command. Who sees what: a domain or a published tournament shows only
the systems the visitor may see (private and embargoed systems are left out, as their
conversations never happened for that visitor); a study or a campaign is staff-only, as
their pages are.
"""

from django.http import Http404
from django.shortcuts import render
from django.views.decorators.http import require_GET

from analysis.inputs.dialogue import SCOPES, UnknownScope, conversations_in, load_dialogues
from analysis.reports import NothingToAnalyse
from evalhub.models import System
from evalhub.permissions import is_staff
from tournaments.models import Tournament

MAX_CONVERSATIONS = 5000
PUBLIC_SCOPES = ("domain", "tournament")


def _check_access(user, scope: str, name: str) -> None:
    if scope not in SCOPES:
        raise Http404("No such scope.")
    if scope not in PUBLIC_SCOPES and not is_staff(user):
        raise Http404("No such page.")
    if scope == "tournament" and not Tournament.objects.visible_to(user).filter(slug=name).exists():
        raise Http404("No such tournament.")


@require_GET
def dialogue_metrics(request, scope, name):
    _check_access(request.user, scope, name)
    context = {"scope": scope, "name": name, "limit": MAX_CONVERSATIONS}
    try:
        if conversations_in(scope, name).count() > MAX_CONVERSATIONS:
            context["too_many"] = True
            return render(request, "analysis/dialogue_metrics.html", context)
        inputs = load_dialogues(scope, name)
    except UnknownScope as unknown:
        raise Http404(str(unknown)) from None
    visible = set(System.objects.visible_to(request.user).values_list("slug", flat=True))
    dialogues = [d for d in inputs.dialogues if d.system in visible]
    # The report imports scipy.stats: here, not with this module, loaded at app start-up.
    from analysis.reports.dialogue_metrics import dialogue_metrics_report

    try:
        result = dialogue_metrics_report(
            dialogues,
            scope=inputs.scope,
            skipped=inputs.skipped,
            error_labels=inputs.error_labels,
        )
    except NothingToAnalyse as nothing:
        context["nothing"] = str(nothing)
        return render(request, "analysis/dialogue_metrics.html", context)
    context.update(table_context(result))
    context["text_rows"] = result["text"]
    return render(request, "analysis/dialogue_metrics.html", context)


def table_context(result: dict) -> dict:
    """Rows of the metric table and of the three rankings in the shape of the paper's
    Table 2 (a line per metric, a column per system)."""
    systems = [row["system"] for row in result["systems"]]
    by_system = {row["system"]: row for row in result["systems"]}
    metric_rows = [
        {
            "label": metric["label"],
            "higher_is_better": metric["higher_is_better"],
            "cells": [by_system[s][metric["name"]] for s in systems],
        }
        for metric in result["metrics"]
    ]
    rankings = []
    titles = {
        "stack": "Stack ranking",
        "winners_circle": "Winners' circle",
        "confidence_bands": "Confidence bands",
    }
    labels = {m["name"]: m["label"] for m in result["metrics"]}
    for key, title in titles.items():
        ranking = result["rankings"].get(key)
        if ranking is None:
            continue
        order = [row["system"] for row in ranking["rows"]]
        rows = {row["system"]: row for row in ranking["rows"]}
        rankings.append(
            {
                "key": key,
                "title": title,
                "systems": order,
                "lines": [
                    {
                        "label": labels[m],
                        "benchmarks": ranking["benchmarks"].get(m, []),
                        "scores": [rows[s]["scores"][m] for s in order],
                    }
                    for m in ranking["metrics"]
                ],
                "totals": [rows[s]["total"] for s in order],
                "positions": [rows[s]["position"] for s in order],
                "bands": [rows[s]["band"] for s in order],
            }
        )
    validity = result.get("validity") or {}  # results stored before it was computed
    conversation_labels = {
        "n_turns": "Turns",
        "duration_seconds": "Duration (s)",
        "response_error_rate": "Response error rate",
        "depth": "Depth",
        "topic_entropy": "Topic entropy (bits)",
    }
    validity_rows = {
        "systems": [{**row, "label": labels[row["metric"]]} for row in validity.get("systems", [])],
        "conversations": [
            {**row, "label": conversation_labels[row["metric"]]}
            for row in validity.get("conversations", [])
        ],
        "unified": [
            {**row, "label": titles[row["ranking"]]} for row in validity.get("unified", [])
        ],
    }
    return {
        "result": result,
        "systems": systems,
        "metric_rows": metric_rows,
        "rankings": rankings,
        "validity": validity_rows,
    }
