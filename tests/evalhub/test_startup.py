"""App loading imports no heavy library: every process (a command, a gunicorn or Celery worker)
pays for what start-up imports, and scipy.stats alone costs about a second.

Start-up is measured in a fresh interpreter, as a process starts: ``django.setup()`` (settings,
models, admin, every app's ``ready()`` and the signals it connects), then Django's system
checks, which import the root URLconf and through it every view module, then what a Celery
worker imports when it boots (every app's ``tasks``). A failure names the chain of modules
that imported the library, read from ``python -X importtime``.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APPS = ("evalhub", "annotation", "tournaments", "judging", "analysis")
# Imported where they are used, never at start-up (trueskill and lifelines are test
# references and no runtime module should import them at all). numpy too: about 0.1 s of a
# start-up that must stay under 1 s (bench/bench_startup.py), and only the analysis uses it.
HEAVY = (
    "numpy",
    "scipy.stats",
    "matplotlib",
    "statsmodels",
    "boto3",
    "botocore",
    "lifelines",
    "trueskill",
    "krippendorff",
    # redis-py: 0.13 s, and only a process that talks to Redis needs it (evalhub/cache.py
    # tells its errors by their class's name).
    "redis",
)

START = f"""
import importlib, json, sys
import django
django.setup()
from django.core.management import call_command
call_command("check", verbosity=0)
for app in {APPS!r}:
    for part in ("admin", "urls", "signals", "tasks"):
        try:
            importlib.import_module(f"{{app}}.{{part}}")
        except ModuleNotFoundError as missing:
            if missing.name != f"{{app}}.{{part}}":
                raise
print(json.dumps(sorted(sys.modules)))
"""


# What ``manage.py analyze`` of a Spot The Bot study computes (bench/bench_startup.py times
# it): its report uses scipy.special and scipy.optimize, never scipy.stats (half a second).
SPOT_THE_BOT_REPORT = """
import json, sys
import django
django.setup()
from analysis.reports import build_report
from demo.simulation import SpotTheBotModel, simulate_spot_the_bot
model = SpotTheBotModel(
    hazards={"bot-strong": 0.05, "bot-weak": 1.2}, conversations_per_pair=6,
    human_conversations=4, workers=10, careless_workers=2,
)
report = build_report(
    simulate_spot_the_bot(model, seed=3),
    {"replicates": 50, "bt_bootstrap": 50, "alpha_resamples": 100, "stability_points": 2,
     "stability_subsamples": 2, "stability_replicates": 10},
)
assert report["survival"]["logrank"] and report["agreement"], report["warnings"]
print(json.dumps(sorted(sys.modules)))
"""


def start_up(code: str = START) -> tuple[set[str], str]:
    """The modules a fresh process has imported after running ``code`` (by default start-up),
    and its ``-X importtime`` log."""
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "evalhub.settings", "DEBUG": "1"}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return set(json.loads(done.stdout.strip().splitlines()[-1])), done.stderr


def import_chain(log: str, module: str) -> str:
    """Who imported ``module`` first: "module <- importer <- ... <- top-level import".

    ``-X importtime`` prints a module after everything it imported, indented by depth, so the
    importer of a line is the next line below it that is less indented. A package imported
    through its parent's ``__getattr__`` (``from scipy import stats``) has no line of its
    own: its first submodule's line stands for it.
    """
    rows = []
    for line in log.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            name = line.split("|")[2]
            rows.append((len(name) - len(name.lstrip(" ")), name.strip()))
    named = any(name == module for _, name in rows)
    for index, (depth, name) in enumerate(rows):
        if name == module or (not named and name.startswith(module + ".")):
            chain = [name if name == module else f"{module} ({name})"]
            for outer_depth, outer in rows[index + 1 :]:
                if outer_depth < depth:
                    chain.append(outer)
                    depth = outer_depth
            return " <- ".join(chain)
    return f"{module} (not in the import log)"


def test_it_imports_no_heavy_library_at_start_up():
    modules, log = start_up()

    imported = [name for name in HEAVY if name in modules]

    assert imported == [], "\n".join(import_chain(log, name) for name in imported)
    assert "analysis.urls" in modules and "analysis.runs.tasks" in modules  # it did start up


def test_a_spot_the_bot_report_imports_no_scipy_stats():
    modules, log = start_up(SPOT_THE_BOT_REPORT)

    assert "scipy.stats" not in modules, import_chain(log, "scipy.stats")
    assert "evalstats.interval_logrank" in modules  # the report did run


def test_import_chain_names_each_importer():
    log = "\n".join(
        [
            "import time: self [us] | cumulative | imported package",
            "import time:        10 |         10 |       scipy.stats",
            "import time:        10 |         20 |     evalstats.pairwise",
            "import time:        10 |         10 |     numpy",
            "import time:        10 |         40 |   analysis.reports.common",
            "import time:        10 |         50 | analysis.signals",
        ]
    )

    assert import_chain(log, "scipy.stats") == (
        "scipy.stats <- evalstats.pairwise <- analysis.reports.common <- analysis.signals"
    )
    assert import_chain(log.replace("scipy.stats", "scipy.stats._stats_py"), "scipy.stats") == (
        "scipy.stats (scipy.stats._stats_py) <- evalstats.pairwise <- analysis.reports.common"
        " <- analysis.signals"
    )
