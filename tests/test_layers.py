"""The layers of docs/architecture.md: each app imports only what stands below it.

    demo          (the demo loader: may import everything, nothing imports it)
    analysis      (inputs, runs, reports, pages, api)
    judging       (automatic judges: judge runs over campaigns)
    arenas        (side-by-side battles between live models, their votes and leaderboard)
    tournaments   (plans, collection, campaign generation)
    annotation    (campaigns, kinds, allocation, quality, crowd providers)
    webhooks      (owners' event subscriptions, signed deliveries: sent through endpoints' guard)
    endpoints     (model calls: bot endpoints, their client, budgets, the outbound guard)
    evalhub       (settings, catalog, submission hub)

    evalstats     (pure statistics: numpy and scipy only; any layer may import it)

Every import is read with ``ast``: top-level and inside functions, absolute and relative.
The same imports make a graph of the project's modules, which must have no circle: a
function-local import that closes one is still a circle (the architecture's "a function-local
import is an import"), only a circle that waits for run time to bite.
Names in strings are not imports: the project's wiring (``INSTALLED_APPS`` in
evalhub/settings.py, ``include("annotation.urls")`` in the root URLconf evalhub/urls.py,
``{% load analysis_tags %}`` in a template) names the apps Django assembles at start-up,
the way the project is meant to be put together, so it is allowed; an ``import`` of a
higher app in those files is a back door like any other.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APPS = (
    "evalhub",
    "endpoints",
    "webhooks",
    "annotation",
    "tournaments",
    "arenas",
    "judging",
    "analysis",
    "demo",
)
# Where circles are looked for: the layered apps, portability (export and import of every
# table, outside the layers) and the pure statistics.
CIRCLE_SCOPE = (*APPS, "portability", "evalstats")
STATS = "evalstats"
CLOUD_SDKS = ("boto3", "botocore")
MTURK_PROVIDER = "annotation.crowd.mturk"


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def imported_names(source: str, module: str, is_package: bool = False) -> list[tuple[str, int]]:
    """(absolute module name, line) of every import in ``source``, the module ``module``.

    ``from x import y`` yields ``x.y`` as well as ``x``, since ``y`` may be a submodule
    (``from analysis import tasks``); relative imports are resolved against ``module``.
    """
    package = module if is_package else module.rpartition(".")[0]
    names = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                anchor = ".".join(parts[: len(parts) - (node.level - 1)])
                base = f"{anchor}.{base}" if base else anchor
            if node.module:
                names.append((base, node.lineno))
            names.extend((f"{base}.{alias.name}", node.lineno) for alias in node.names)
    return names


def layer_violation(module: str, imported: str) -> str | None:
    """Why ``module`` may not import ``imported``, or None if it may."""
    if _within(module, STATS):
        outside = _within(imported, "django") or any(_within(imported, a) for a in APPS)
        if outside and not _within(imported, STATS):
            return "evalstats is pure: no Django and no app"
        return None
    if any(_within(imported, sdk) for sdk in CLOUD_SDKS) and not _within(module, MTURK_PROVIDER):
        return f"only {MTURK_PROVIDER} talks to the AWS SDK"
    if _within(imported, STATS):
        return None
    if _within(module, "annotation.crowd") and _within(imported, "annotation.kinds"):
        return "a crowd provider moves people and money; it knows no task kind"
    forbidden = {
        "evalhub": (
            "endpoints",
            "webhooks",
            "annotation",
            "tournaments",
            "arenas",
            "judging",
            "analysis",
            "demo",
        ),
        "endpoints": (
            "webhooks",
            "annotation",
            "tournaments",
            "arenas",
            "judging",
            "analysis",
            "demo",
        ),
        "webhooks": ("annotation", "tournaments", "arenas", "judging", "analysis", "demo"),
        "annotation": ("tournaments", "arenas", "judging", "analysis", "demo"),
        "tournaments": ("arenas", "judging", "analysis", "demo"),
        "arenas": ("judging", "analysis", "demo"),
        "judging": ("analysis", "demo"),
        "analysis": ("demo",),
    }
    for app, above in forbidden.items():
        if _within(module, app):
            for higher in above:
                if _within(imported, higher):
                    return f"{app} stands below {higher}"
    return None


def check_module(source: str, module: str, is_package: bool = False) -> list[str]:
    """One message per import statement that crosses the layers."""
    problems = {}
    for name, line in imported_names(source, module, is_package):
        why = layer_violation(module, name)
        if why and line not in problems:
            problems[line] = f"{module} line {line}: imports {name} ({why})"
    return list(problems.values())


def project_modules(apps=(*APPS, STATS)):
    for app in apps:
        for path in sorted((ROOT / app).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            is_package = parts[-1] == "__init__"
            yield path, ".".join(parts[:-1] if is_package else parts), is_package


def test_no_module_imports_across_the_layers():
    modules = list(project_modules())
    assert len(modules) > 100
    violations = [
        problem
        for path, module, is_package in modules
        for problem in check_module(path.read_text(), module, is_package)
    ]
    assert violations == []


FAKE_BACK_DOORS = [
    ("evalhub.views.fake", "def view():\n    from annotation.models import Campaign\n", False),
    ("evalhub.views.fake", "from annotation import views\n", False),
    ("evalhub.fake", "import tournaments.models\n", False),
    ("evalhub.fake", "from demo.loader import load_demo\n", False),
    ("annotation.fake", "from tournaments.models import Tournament\n", False),
    ("annotation.templatetags.fake", "from analysis.pages.leaderboards import plot_url\n", False),
    ("tournaments.fake", "from analysis import tasks\n", False),
    ("tournaments.fake", "x = 1\n\n\ndef f():\n    import analysis.runs.tasks\n", False),
    ("evalstats.fake", "from django.db import models\n", False),
    ("evalstats", "from evalhub.models import System\n", True),
    ("evalstats.fake", "from analysis.models import AnalysisRun\n", False),
    ("annotation.crowd.fake", "from ..kinds import get_kind\n", False),
    ("annotation.crowd.prolific", "import boto3\n", False),
    ("tournaments.fake", "from botocore.stub import Stubber\n", False),
    ("annotation.fake", "from judging.models import Judge\n", False),
    ("tournaments.fake", "from judging import tasks\n", False),
    ("judging.fake", "from analysis.models import AnalysisRun\n", False),
    ("evalhub.fake", "import judging.models\n", False),
    ("evalhub.fake", "from endpoints.client import BotClient\n", False),
    ("endpoints.fake", "from annotation.models import Campaign\n", False),
    ("endpoints.chat", "from annotation.chat import ReplyFailed\n", False),
    ("endpoints.fake", "from tournaments.models import Tournament\n", False),
    ("endpoints.fake", "def f():\n    import judging.models\n", False),
    ("tournaments.fake", "from arenas.models import Arena\n", False),
    ("annotation.fake", "def f():\n    from arenas import tasks\n", False),
    ("endpoints.streaming", "from arenas.models import Battle\n", False),
    ("arenas.fake", "from judging.models import Judge\n", False),
    ("arenas.views.fake", "from analysis.pages import leaderboards\n", False),
    ("evalhub.fake", "import arenas\n", False),
]


@pytest.mark.parametrize(("module", "source", "is_package"), FAKE_BACK_DOORS)
def test_the_checker_finds_a_back_door(module, source, is_package):
    problems = check_module(source, module, is_package)
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"{module} line ")


ALLOWED = [
    ("evalhub.tasks", "from evalstats.text_metrics import bleu\n", False),
    ("evalhub.urls", 'urlpatterns = [path("", include("annotation.urls"))]\n', False),
    ("annotation.fake", "from evalhub.models import System\n", False),
    ("tournaments.fake", "from annotation.models import Campaign\n", False),
    ("analysis.fake", "from tournaments.models import Tournament\n", False),
    ("analysis.fake", "from judging.models import AutomaticJudgment\n", False),
    ("judging.fake", "from endpoints.client import BotClient\n", False),
    ("annotation.chat", "from endpoints import chat\n", False),
    ("annotation.fake", "from endpoints.models import BotEndpoint\n", False),
    ("tournaments.fake", "from endpoints.client import BotClient, Endpoint\n", False),
    ("endpoints.fake", "from evalhub.models import System\n", False),
    ("judging.fake", "from evalstats.text_metrics import distinct_n\n", False),
    ("evalstats.fake", "from .pairwise import A_WINS\nimport numpy\n", False),
    ("annotation.crowd.mturk", "import boto3\nfrom botocore.stub import Stubber\n", False),
    ("annotation.crowd.fake", "from ..models import Campaign\n", False),
    ("demo.loader", "from demo.leaderboards import load_analysis_demo\n", False),
    ("arenas.relay", "from endpoints.streaming import AsyncBotClient\n", False),
    ("arenas.fake", "from tournaments.models import Tournament\n", False),
    ("arenas.leaderboard", "from evalstats.bradley_terry import fit_bradley_terry\n", False),
    ("judging.fake", "from arenas.models import Battle\n", False),
    ("analysis.fake", "from arenas.models import Arena\n", False),
]


@pytest.mark.parametrize(("module", "source", "is_package"), ALLOWED)
def test_the_checker_allows_imports_downwards(module, source, is_package):
    assert check_module(source, module, is_package) == []


def module_imports(source: str, module: str, is_package: bool, known: set[str]) -> set[str]:
    """The modules of ``known`` that ``module`` imports, anywhere in its body.

    ``from pkg import name`` is an edge to the submodule ``pkg.name`` when there is one, and
    to ``pkg`` itself (its ``__init__``) otherwise; ``import a.b`` is an edge to ``a.b``.
    The packages above an imported module are not edges: an ``__init__`` that imports its
    submodules (``from . import signals``) closes a circle only if one of them imports a
    name from the package itself.
    """
    package = module if is_package else module.rpartition(".")[0]
    edges = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            edges.update(alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                anchor = ".".join(parts[: len(parts) - (node.level - 1)])
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                if f"{base}.{alias.name}" in known:
                    edges.add(f"{base}.{alias.name}")
                elif base in known:
                    edges.add(base)
    edges.discard(module)
    return edges


def import_circles(graph: dict[str, set[str]]) -> list[str]:
    """One circle per strongly connected group of modules, ``a -> b -> c -> a``.

    The groups are Tarjan's; each is reported by the shortest circle through its first
    module (in name order), so that fixing it shows the next one, if any.
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(start: str) -> None:
        # Iterative, so that a long import chain cannot reach the recursion limit.
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph.get(successor, ())))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(_shortest_circle(graph, group) for group in groups)


def _shortest_circle(graph: dict[str, set[str]], group: list[str]) -> str:
    members, first = set(group), group[0]
    came_from = {first: None}
    frontier = [first]
    while frontier:
        following = []
        for node in frontier:
            for successor in sorted(graph[node] & members):
                if successor == first:
                    path = [first]
                    while node is not None:
                        path.append(node)
                        node = came_from[node]
                    return " -> ".join(reversed(path))
                if successor not in came_from:
                    came_from[successor] = node
                    following.append(successor)
        frontier = following
    raise AssertionError(f"{group} is strongly connected but has no circle")


def project_import_graph() -> dict[str, set[str]]:
    apps = [app for app in CIRCLE_SCOPE if (ROOT / app).is_dir()]
    modules = [
        (path.read_text(), module, is_package) for path, module, is_package in project_modules(apps)
    ]
    known = {module for _, module, _ in modules}
    return {module: module_imports(source, module, pkg, known) for source, module, pkg in modules}


def test_no_import_circles():
    graph = project_import_graph()
    assert len(graph) > 100
    assert import_circles(graph) == []


def graph_of(sources: dict[str, str]) -> dict[str, set[str]]:
    """The import graph of made-up modules: names ending in ``/`` are packages."""
    known = {name.rstrip("/") for name in sources}
    return {
        name.rstrip("/"): module_imports(source, name.rstrip("/"), name.endswith("/"), known)
        for name, source in sources.items()
    }


FAKE_CIRCLES = [
    (
        {"a.one": "from a.two import f\n", "a.two": "def f():\n    from a.one import g\n"},
        "a.one -> a.two -> a.one",
    ),
    (
        {
            "a.campaigns": "from a import services\n",
            "a.services": "from .tasks import run\n",
            "a.tasks": "def run():\n    import a.campaigns\n",
            "a/": "",
        },
        "a.campaigns -> a.services -> a.tasks -> a.campaigns",
    ),
    (
        {"a/": "from . import x\n", "a.x": "from a import CONSTANT\n"},
        "a -> a.x -> a",
    ),
]


@pytest.mark.parametrize(("sources", "circle"), FAKE_CIRCLES)
def test_the_checker_finds_a_circle(sources, circle):
    assert import_circles(graph_of(sources)) == [circle]


NOT_CIRCLES = [
    # A chain, however long, and one module imported from two sides.
    {"a.one": "from a.two import f\n", "a.two": "from a.three import g\n", "a.three": "x = 1\n"},
    {"a.one": "import a.three\n", "a.two": "from a.three import g\n", "a.three": "import os\n"},
    # A package that gathers its submodules, which import one another, not the package.
    {"a/": "from . import x, y\n", "a.x": "from a.y import f\n", "a.y": "import numpy\n"},
]


@pytest.mark.parametrize("sources", NOT_CIRCLES)
def test_the_checker_allows_imports_without_circles(sources):
    assert import_circles(graph_of(sources)) == []
