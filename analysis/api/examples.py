"""OpenAPI examples of the analysis API. The report is a real one: `build_report` on the
simulated Spot The Bot study of tests/analysis/builders.py (`canned_result`), its floats
rounded, so that the example always has the shape the serializers declare."""

import json
from pathlib import Path

from drf_spectacular.utils import OpenApiExample

from analysis.runs.parameters import (
    PRESET_DESCRIPTIONS,
    normalize_parameters,
    parameter_rows,
    preset_parameters,
)

REPORT = json.loads((Path(__file__).with_name("example_report.json")).read_text())
PARAMETERS = normalize_parameters({})
RUN = {
    "id": 42,
    "tournament": REPORT["tournament"],
    "campaign": "chitchat-2026",
    "status": "succeeded",
    "progress": "",
    "parameters": PARAMETERS,
    "inputs_digest": "3f5a9c0e7b1d2f4a6c8e0b2d4f6a8c0e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a",
    "versions": {"numpy": "2.1.3", "scipy": "1.14.1", "evalhub": "0.9.0"},
    "created": "2026-11-21T08:00:00Z",
    "started_at": "2026-11-21T08:00:01Z",
    "finished_at": "2026-11-21T08:00:09Z",
    "error": "",
    "stability_state": "done",
    "stability_error": "",
}
QUEUED = {
    **RUN,
    "id": 43,
    "status": "pending",
    "progress": "",
    "started_at": None,
    "finished_at": None,
    "stability_state": "",
}
PROVENANCE = {
    **{key: RUN[key] for key in ("id", "finished_at", "parameters", "inputs_digest", "versions")},
    "stability": RUN["stability_state"],
}


def out(name, value, code="200"):
    return OpenApiExample(name, value=value, response_only=True, status_codes=[code])


RUN_LIST = [out("Analysis runs", [RUN])]
RUN_DETAIL = [out("A succeeded run", {**RUN, "result": REPORT})]
RUN_CREATED = [out("Queued", QUEUED, "201"), out("Already analysed", RUN)]
RESULTS = [
    out("Spot The Bot results", {**REPORT, "run": PROVENANCE}),
    out(
        "The stability curve still being computed",
        {**REPORT, "stability": None, "run": {**PROVENANCE, "stability": "running"}},
    ),
]
SETTINGS = [
    out(
        "Presets and parameters",
        {
            "presets": {
                name: {"description": description, "parameters": preset_parameters(name)}
                for name, description in PRESET_DESCRIPTIONS.items()
            },
            "parameters": parameter_rows()[:2],
        },
    )
]
TOURNAMENT_RUN = {
    "id": 43,
    "status": "pending",
    "progress": "",
    "parameters": preset_parameters("as-published"),
    "results": "/api/tournaments/chitchat-2026/results/",
}
ANALYSE = [
    OpenApiExample(
        "As published",
        value={"preset": "as-published", "parameters": {}},
        request_only=True,
    ),
    out("Queued", TOURNAMENT_RUN, "202"),
    out("Already analysed", {**TOURNAMENT_RUN, "id": 42, "status": "succeeded"}),
]

# Human versus automatic: a real report of simulated Likert ratings (four systems, eight
# conversations each, three workers and a judge per conversation), floats rounded.
VERSUS_REPORT = json.loads((Path(__file__).with_name("example_versus.json")).read_text())
VERSUS = [
    out(
        "A judge run against the humans",
        {
            **VERSUS_REPORT,
            "run": {**PROVENANCE, "parameters": preset_parameters("defaults")},
        },
    )
]
VERSUS_RUN = {"id": 44, "status": "pending", "progress": "", "parameters": PARAMETERS}
VERSUS_REQUESTED = [
    out("Queued", VERSUS_RUN, "202"),
    out("Already compared", {**VERSUS_RUN, "status": "succeeded", "progress": "Done"}),
]
