"""SVG plots of a result (the contract of ``analysis.report``), rendered on the server.

Each function takes the result dict and returns SVG text, or None when the result has
nothing to draw. Figures are built as ``matplotlib.figure.Figure`` objects and printed by
the SVG canvas directly: no pyplot, no backend switch and no figure registry, and every
style setting lives in an ``rc_context``, so rendering leaves no global state behind and is
safe in a worker that renders many runs. Text stays text (``svg.fonttype = none``), which
keeps the files small and the labels searchable; ``svg.hashsalt`` and a fixed date make the
output deterministic.

Curves carry SVG ids that say what they are: the survival plot has one ``<g id="curve-<slug>">``
per system and ``<g id="reference-human">`` for the human controls.
"""

from __future__ import annotations

import io
import math

import matplotlib
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.figure import Figure

__all__ = [
    "available_plots",
    "cox_forest",
    "render_plots",
    "stability_curve",
    "survival_curves",
    "system_plot_name",
    "win_rate_heatmap",
]

SIGNIFICANCE = 0.05
_STYLE = {
    "svg.fonttype": "none",
    "font.family": "sans-serif",
    "font.size": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
}
_PALETTE = matplotlib.colormaps["tab10"].colors


def _color(result: dict, system: str):
    systems = result.get("systems", [])
    index = systems.index(system) if system in systems else len(systems)
    return _PALETTE[index % len(_PALETTE)]


def _number(value) -> float:
    return math.nan if value is None else float(value)


def _render(name: str, draw, figsize) -> str:
    with matplotlib.rc_context({**_STYLE, "svg.hashsalt": name}):
        figure = Figure(figsize=figsize, layout="constrained")
        draw(figure)
        buffer = io.StringIO()
        FigureCanvasSVG(figure).print_svg(buffer, metadata={"Date": None})
    return buffer.getvalue()


def _has_heatmap(result: dict) -> bool:
    return len(result.get("systems", [])) >= 2 and bool(result.get("pairwise"))


def _has_survival(result: dict) -> bool:
    survival = result.get("survival") or {}
    return bool(survival.get("segment_lengths") and survival.get("curves"))


def _has_cox(result: dict) -> bool:
    cox = (result.get("survival") or {}).get("cox") or {}
    return any(cox.get(system) for system in result.get("systems", []))


def _has_stability(result: dict) -> bool:
    return bool((result.get("stability") or {}).get("n_conversations"))


def available_plots(result: dict) -> list[str]:
    """Names of the plots ``render_plots`` draws for this result (without drawing them)."""
    checks = {
        "heatmap": _has_heatmap,
        "survival": _has_survival,
        "cox": _has_cox,
        "stability": _has_stability,
    }
    names = [name for name, check in checks.items() if check(result)]
    if "survival" in names:
        names += [system_plot_name(s) for s in result["survival"]["curves"]]
    return names


def win_rate_heatmap(result: dict) -> str | None:
    """Win rate of the row system against the column system; * marks a significant pair
    (adjusted p below 0.05). Systems best first."""
    if not _has_heatmap(result):
        return None
    systems = result["systems"]
    position = {s: i for i, s in enumerate(systems)}
    n = len(systems)
    rates = [[math.nan] * n for _ in range(n)]
    marks = [[""] * n for _ in range(n)]
    for pair in result["pairwise"]:
        i, j = position[pair["a"]], position[pair["b"]]
        rate = _number(pair["win_rate_a"])
        rates[i][j], rates[j][i] = rate, 1.0 - rate
        p = pair["p_adjusted"]
        mark = "*" if p is not None and p < SIGNIFICANCE else ""
        marks[i][j] = marks[j][i] = mark

    def draw(figure):
        ax = figure.add_subplot()
        image = ax.imshow(rates, cmap="RdBu", vmin=0.0, vmax=1.0)
        ax.set_xticks(range(n), systems, rotation=35, ha="right")
        ax.set_yticks(range(n), systems)
        ax.set_xlabel("opponent")
        ax.set_ylabel("system")
        for i in range(n):
            for j in range(n):
                if math.isnan(rates[i][j]):
                    continue
                dark = abs(rates[i][j] - 0.5) > 0.3
                ax.text(
                    j,
                    i,
                    f"{rates[i][j]:.2f}{marks[i][j]}",
                    ha="center",
                    va="center",
                    color="white" if dark else "black",
                )
        figure.colorbar(image, ax=ax, label="win rate of the row system", shrink=0.8)

    side = 2.4 + 0.75 * n
    return _render("heatmap", draw, (side + 1.4, side))


def survival_curves(result: dict, highlight: str | None = None) -> str | None:
    """Turnbull survival curves, one step function per system across segment lengths.

    With ``highlight`` that system is drawn in colour and the others in grey (the plot of a
    system's profile page).
    """
    if not _has_survival(result):
        return None
    survival = result["survival"]
    lengths = survival["segment_lengths"]
    curves = survival["curves"]
    x = [0, *lengths]

    def draw(figure):
        ax = figure.add_subplot()
        for system in [s for s in result.get("systems", []) if s in curves]:
            y = [1.0, *(_number(v) for v in curves[system])]
            faded = highlight is not None and system != highlight
            ax.step(
                x,
                y,
                where="post",
                marker="o",
                markevery=list(range(1, len(x))),
                linewidth=1.0 if faded else 2.0,
                color="#b8c0cc" if faded else _color(result, system),
                label="_nolegend_" if faded else system,
                gid=f"curve-{system}",
                zorder=1 if faded else 3,
            )
        human = survival.get("human")
        if human:
            ax.step(
                x,
                [1.0, *(_number(v) for v in human)],
                where="post",
                linestyle="--",
                color="#5f6b7a",
                label="human (controls)",
                gid="reference-human",
            )
        ax.set_xticks(x)
        ax.set_xlim(0, lengths[-1] + 0.2)
        ax.set_ylim(0, 1.03)
        ax.set_xlabel("exchanges shown (segment length)")
        ax.set_ylabel("share not spotted, S(k)")
        ax.legend(loc="lower left", fontsize=9, frameon=False)
        ax.grid(axis="y", color="#e5e9ef")

    return _render(f"survival-{highlight or 'all'}", draw, (6.4, 4.0))


def cox_forest(result: dict) -> str | None:
    """Cox coefficients per system and feature with 95% intervals; filled = significant."""
    if not _has_cox(result):
        return None
    cox = result["survival"]["cox"]
    rows = [
        (system, feature, values)
        for system in result.get("systems", [])
        for feature, values in cox.get(system, {}).items()
    ]

    def draw(figure):
        ax = figure.add_subplot()
        labels = []
        for y, (system, feature, values) in enumerate(rows):
            coef, se, p = _number(values["coef"]), _number(values["se"]), values["p_value"]
            color = _color(result, system)
            significant = p is not None and p < SIGNIFICANCE
            ax.errorbar(
                coef,
                y,
                xerr=1.96 * se,
                fmt="o",
                color=color,
                markerfacecolor=color if significant else "white",
                capsize=3,
                gid=f"cox-{system}-{feature}",
            )
            labels.append(f"{system} · {feature}")
        ax.axvline(0.0, color="#5f6b7a", linewidth=1)
        ax.set_yticks(range(len(rows)), labels)
        ax.invert_yaxis()
        ax.set_xlabel(
            "log hazard ratio of being spotted, 95% CI\n(< 0: the speaker lasts longer when preferred)"
        )

    return _render("cox", draw, (7.0, 1.2 + 0.28 * len(rows)))


def stability_curve(result: dict) -> str | None:
    """Share of subsamples of n conversations per pair that reproduce the ranking."""
    if not _has_stability(result):
        return None
    stability = result["stability"]
    n = stability["n_conversations"]

    def draw(figure):
        ax = figure.add_subplot()
        ax.plot(
            n,
            [_number(v) for v in stability["share_reproduced"]],
            marker="o",
            color=_PALETTE[0],
            label="reproduces the full-data ranking",
            gid="stability-reproduced",
        )
        ax.plot(
            n,
            [_number(v) for v in stability["share_modal"]],
            marker="s",
            linestyle="--",
            color=_PALETTE[1],
            label="most common subsample ranking",
            gid="stability-modal",
        )
        for entry in stability.get("leave_one_out") or []:
            ax.plot(
                entry["n_conversations"],
                [_number(v) for v in entry["share_reproduced"]],
                linewidth=1,
                color=_color(result, entry["left_out"]),
                label=f"without {entry['left_out']}",
                gid=f"stability-without-{entry['left_out']}",
            )
        ax.set_ylim(0, 1.05)
        ax.set_xticks(n)
        ax.set_xlabel("conversations per pair of systems")
        ax.set_ylabel("share of subsamples")
        ax.legend(loc="lower right", fontsize=9, frameon=False)
        ax.grid(axis="y", color="#e5e9ef")

    return _render("stability", draw, (6.4, 3.6))


def system_plot_name(system: str) -> str:
    """Key of a system's own survival plot in ``render_plots``' output."""
    return f"survival-{system}"


def render_plots(result: dict) -> dict[str, str]:
    """Every plot of a result: heatmap, survival, cox, stability and one survival plot per
    system (highlighted against the others); plots with nothing to draw are left out."""
    plots = {
        "heatmap": win_rate_heatmap(result),
        "survival": survival_curves(result),
        "cox": cox_forest(result),
        "stability": stability_curve(result),
    }
    for system in (result.get("survival") or {}).get("curves") or {}:
        plots[system_plot_name(system)] = survival_curves(result, highlight=system)
    return {name: svg for name, svg in plots.items() if svg is not None}
