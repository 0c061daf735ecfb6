"""SVG plots of a result (the contract of ``analysis.reports``), rendered on the server.

Each function takes the result dict and returns SVG text, or None when the result has
nothing to draw. Figures are built as ``matplotlib.figure.Figure`` objects and printed by
the SVG canvas directly: no pyplot, no backend switch and no figure registry, and every
style setting lives in an ``rc_context``, so rendering leaves no global state behind and is
safe in a worker that renders many runs. Text stays text (``svg.fonttype = none``), which
keeps the files small and the labels searchable; ``svg.hashsalt`` and a fixed date make the
output deterministic.

Figures grow with their longest system name (`_label_inches`) and legends that name systems
sit outside the axes, where the constrained layout makes room for them, so no label is ever
cut off by the figure's edge.

Curves carry SVG ids that say what they are: the survival plot has one ``<g id="curve-<slug>">``
per system and ``<g id="reference-human">`` for the human controls.
"""

from __future__ import annotations

import io
import math
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "DIMENSIONAL_PLOT_TITLES",
    "agreement_plot",
    "agreement_rows",
    "available_dimensional_plots",
    "available_plots",
    "behaviour_rate_plot",
    "comparative_plot",
    "dimensional_plots",
    "likert_mean_plot",
    "cox_forest",
    "render_plots",
    "stability_curve",
    "survival_plots",
    "system_plot_name",
    "versus_plot_names",
    "versus_plots",
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


# matplotlib is imported by the functions that draw, never with this module: the pages and
# the run bookkeeping that import the cheap parts here (which plots a result has, their
# names) are loaded at app start-up by every process, and matplotlib costs about 0.3 s.
@cache
def _palette() -> tuple:
    import matplotlib

    return matplotlib.colormaps["tab10"].colors


def _color(result: dict, system: str):
    systems = result.get("systems", [])
    index = systems.index(system) if system in systems else len(systems)
    palette = _palette()
    return palette[index % len(palette)]


def _number(value) -> float:
    return math.nan if value is None else float(value)


# Generous width of a character of the 10 pt sans-serif font, in inches.
_CHAR_INCHES = 0.085
_NOT_COMPARED = "#eef1f5"


def _label_inches(labels) -> float:
    """Room for the longest of ``labels`` at the default font size."""
    return _CHAR_INCHES * max((len(str(label)) for label in labels), default=0)


def _render(name: str, draw, figsize) -> str:
    import matplotlib

    with matplotlib.rc_context(_STYLE):
        return _svg(_figure(draw, figsize), name)


def _svg(figure: Figure, name: str) -> str:
    """The figure as SVG text; ``name`` salts its ids (deterministic output)."""
    import matplotlib
    from matplotlib.backends.backend_svg import FigureCanvasSVG

    with matplotlib.rc_context({"svg.hashsalt": name}):
        buffer = io.StringIO()
        FigureCanvasSVG(figure).print_svg(buffer, metadata={"Date": None})
    return buffer.getvalue()


def _figure(draw, figsize) -> Figure:
    from matplotlib.figure import Figure

    figure = Figure(figsize=figsize, layout="constrained")
    draw(figure)
    return figure


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
    (adjusted p below 0.05). Systems best first. A pair never compared is a grey cell that
    says so, unlike the empty diagonal; a pair with ties only says "ties only"."""
    if not _has_heatmap(result):
        return None
    systems = result["systems"]
    position = {s: i for i, s in enumerate(systems)}
    n = len(systems)
    rates = [[math.nan] * n for _ in range(n)]
    marks = [[""] * n for _ in range(n)]
    compared = [[i == j for j in range(n)] for i in range(n)]
    for pair in result["pairwise"]:
        i, j = position[pair["a"]], position[pair["b"]]
        compared[i][j] = compared[j][i] = True
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
                if not compared[i][j] or (i != j and math.isnan(rates[i][j])):
                    _mark_empty_cell(
                        ax, i, j, "not\ncompared" if not compared[i][j] else "ties\nonly"
                    )
                    continue
                if i == j:
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
    label = _label_inches(systems)
    return _render("heatmap", draw, (side + 1.4 + label, side + 0.6 * label))


def _mark_empty_cell(ax, i: int, j: int, text: str) -> None:
    import matplotlib.patches

    ax.add_patch(
        matplotlib.patches.Rectangle(
            (j - 0.5, i - 0.5), 1, 1, facecolor=_NOT_COMPARED, hatch="//", edgecolor="#c9d1dc"
        )
    )
    ax.text(j, i, text, ha="center", va="center", fontsize=7, color="#5f6b7a", gid=f"empty-{i}-{j}")


def survival_plots(result: dict) -> dict[str, str]:
    """Turnbull survival curves, one step function per system across segment lengths:
    ``"survival"`` with every system in colour, and per system (``system_plot_name``) the
    plot of its profile page, that system in colour and the others in grey.

    One figure serves them all: laid out once with every system in the legend (the widest
    legend any of them has), then restyled and printed per system with that layout. The
    system plots so share the axes of the overall plot, and the layout, the dearest part of
    a figure, is computed once instead of once per system.
    """
    if not _has_survival(result):
        return {}
    survival = result["survival"]
    lengths = survival["segment_lengths"]
    curves = survival["curves"]
    x = [0, *lengths]
    systems = [s for s in result.get("systems", []) if s in curves]
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(_STYLE):
        figure = Figure(figsize=(6.4 + _label_inches(curves), 4.0), layout="constrained")
        ax = figure.add_subplot()
        lines = {}
        for system in systems:
            (lines[system],) = ax.step(
                x,
                [1.0, *(_number(v) for v in curves[system])],
                where="post",
                marker="o",
                markevery=list(range(1, len(x))),
                gid=f"curve-{system}",
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
        ax.grid(axis="y", color="#e5e9ef")
        plots = {"survival": _highlighted(figure, lines, result, None, "survival-all")}
        figure.set_layout_engine("none")
        # one per curve, as available_plots announces (a system with a curve but no place in
        # the ranking is drawn nowhere, so its plot has every curve grey)
        for system in curves:
            plots[system_plot_name(system)] = _highlighted(
                figure, lines, result, system, f"survival-{system}"
            )
    return plots


def _highlighted(figure: Figure, lines: dict, result: dict, highlight, name: str) -> str:
    """The survival figure as SVG with ``highlight`` in colour and the other systems in grey
    (every system in colour when None), its legend naming the systems in colour."""
    for system, line in lines.items():
        faded = highlight is not None and system != highlight
        line.set(
            linewidth=1.0 if faded else 2.0,
            color="#b8c0cc" if faded else _color(result, system),
            label="_nolegend_" if faded else system,
            zorder=1 if faded else 3,
        )
    for legend in figure.legends:
        legend.remove()
    figure.legend(loc="outside right upper", fontsize=9, frameon=False)
    return _svg(figure, name)


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

    label = _label_inches(f"{system} · {feature}" for system, feature, _ in rows)
    return _render("cox", draw, (7.0 + label, 1.2 + 0.28 * len(rows)))


def stability_curve(result: dict) -> str | None:
    """Share of subsamples of n conversations per pair that reproduce the ranking."""
    if not _has_stability(result):
        return None
    stability = result["stability"]
    n = stability["n_conversations"]

    def draw(figure):
        ax = figure.add_subplot()
        if stability.get("reproduced_low") is not None:
            ax.fill_between(
                n,
                [_number(v) for v in stability["reproduced_low"]],
                [_number(v) for v in stability["reproduced_high"]],
                color=_palette()[0],
                alpha=0.18,
                linewidth=0,
                label="95% Wilson interval",
                gid="stability-reproduced-interval",
            )
        ax.plot(
            n,
            [_number(v) for v in stability["share_reproduced"]],
            marker="o",
            color=_palette()[0],
            label="reproduces the full-data ranking",
            gid="stability-reproduced",
        )
        ax.plot(
            n,
            [_number(v) for v in stability["share_modal"]],
            marker="s",
            linestyle="--",
            color=_palette()[1],
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
        figure.legend(loc="outside right upper", fontsize=9, frameon=False)
        ax.grid(axis="y", color="#e5e9ef")

    left_out = [f"without {e['left_out']}" for e in stability.get("leave_one_out") or []]
    return _render("stability", draw, (6.4 + _label_inches(left_out), 3.6))


def system_plot_name(system: str) -> str:
    """Key of a system's own survival plot in ``render_plots``' output."""
    return f"survival-{system}"


def render_plots(result: dict) -> dict[str, str]:
    """Every plot of a result: heatmap, survival, cox, stability and one survival plot per
    system (highlighted against the others); plots with nothing to draw are left out."""
    survival = survival_plots(result)
    plots = {
        "heatmap": win_rate_heatmap(result),
        "survival": survival.pop("survival", None),
        "cox": cox_forest(result),
        "stability": stability_curve(result),
        **survival,
    }
    plots.update(dimensional_plots(result))
    plots.update(versus_plots(result))
    return {name: svg for name, svg in plots.items() if svg is not None}


# --- Dimensional reports: behaviours, Likert, comparative, agreement (ABC-Eval figures) --------
# They read the sections ``behaviours``, ``likert`` and ``comparative`` of a campaign's or a
# study's result (``analysis.reports.abc_eval`` / ``likert`` / ``comparative``).

DIMENSIONAL_PLOT_TITLES = {
    "behaviours-undesirable": "Share of bot turns showing undesirable behaviours "
    "(95% Wilson intervals; ABC-Eval Figure 4)",
    "behaviours-desirable": "Share of bot turns showing desirable behaviours "
    "(95% Wilson intervals; ABC-Eval Figure 5)",
    "likert-dialogue": "Mean dialogue-level Likert ratings (95% Student's t intervals)",
    "likert-turn": "Mean turn-level Likert ratings (95% Student's t intervals)",
    "comparative": "Comparative wins, ties and losses (95% Wilson interval of the wins)",
    "agreement": "Krippendorff's alpha per metric (95% BCa bootstrap intervals; Figure 1)",
}
# Suffixes naming the method of a metric in the agreement plot, as the paper's subscripts.
_METHOD_SUFFIX = {"behaviours": "b", "likert": "d", "comparative": "c"}


def _errors(rows, value: str = "rate") -> list[list[float]]:
    """Asymmetric error bar lengths below and above each value (0 where unknown)."""
    below, above = [], []
    for row in rows:
        centre, low, high = _number(row[value]), _number(row["low"]), _number(row["high"])
        below.append(0.0 if math.isnan(low) or math.isnan(centre) else max(centre - low, 0.0))
        above.append(0.0 if math.isnan(high) or math.isnan(centre) else max(high - centre, 0.0))
    return [below, above]


def _grouped_bars(result, rows, categories, key, value, xlabel, limits, name) -> str:
    """Horizontal bars: one group per category, one bar per system, with error bars."""
    systems = sorted({row["system"] for row in rows})
    index = {(row[key], row["system"]): row for row in rows}
    height = 0.8 / max(len(systems), 1)
    width = 4.5 + _label_inches(categories) + _label_inches(systems)
    figsize = (width, 0.6 + 0.3 * len(categories) * max(len(systems), 1) ** 0.5 + 0.6)

    def draw(figure):
        ax = figure.subplots()
        for s, system in enumerate(systems):
            present = [c for c in categories if (c, system) in index]
            ys = [categories.index(c) + (s - (len(systems) - 1) / 2) * height for c in present]
            picked = [index[(c, system)] for c in present]
            ax.barh(
                ys,
                [_number(row[value]) for row in picked],
                height=height,
                xerr=_errors(picked, value),
                color=_color(result, system),
                label=system,
                error_kw={"elinewidth": 0.8, "capsize": 2},
            )
        ax.set_yticks(range(len(categories)), categories)
        ax.invert_yaxis()
        ax.set_xlim(*limits)
        ax.set_xlabel(xlabel)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)

    return _render(name, draw, figsize)


def behaviour_rate_plot(result: dict, group: str) -> str | None:
    section = result.get("behaviours") or {}
    rows = [row for row in section.get("rates") or [] if row["group"] == group]
    if not rows:
        return None
    labels = sorted({row["label"] for row in rows})
    top = max((_number(row["high"]) for row in rows), default=1.0)
    limits = (0.0, min(1.0, (top if not math.isnan(top) else 1.0) * 1.1 + 0.01))
    return _grouped_bars(
        result, rows, labels, "label", "rate", "share of bot turns", limits, f"behaviours-{group}"
    )


def likert_mean_plot(result: dict, level: str) -> str | None:
    rows = [row for row in (result.get("likert") or {}).get("means") or [] if row["level"] == level]
    if not rows:
        return None
    dimensions = sorted({row["dimension"] for row in rows})
    return _grouped_bars(
        result,
        rows,
        dimensions,
        "dimension",
        "mean",
        "mean rating (1-5)",
        (1, 5),
        f"likert-{level}",
    )


def comparative_plot(result: dict) -> str | None:
    rows = (result.get("comparative") or {}).get("results") or []
    if not rows:
        return None
    names = [f"{row['a']} vs {row['b']}: {row['dimension']}" for row in rows]
    colours = {"wins": "#2b8a3e", "ties": "#adb5bd", "losses": "#c92a2a"}
    figsize = (4.5 + _label_inches(names) + 1.2, 0.9 + 0.28 * len(rows))

    def draw(figure):
        ax = figure.subplots()
        ys = range(len(rows))
        left = [0.0] * len(rows)
        for part, colour in colours.items():
            shares = [_number(row[part]["share"]) for row in rows]
            ax.barh(ys, shares, left=left, color=colour, label=part, height=0.7)
            left = [a + (0.0 if math.isnan(b) else b) for a, b in zip(left, shares, strict=True)]
        wins = [row["wins"] | {"rate": row["wins"]["share"]} for row in rows]
        ax.errorbar(
            [_number(row["rate"]) for row in wins],
            list(ys),
            xerr=_errors(wins),
            fmt="none",
            ecolor="black",
            elinewidth=0.8,
            capsize=2,
        )
        ax.set_yticks(list(ys), names)
        ax.invert_yaxis()
        ax.set_xlim(0, 1)
        ax.set_xlabel("share of judgments (first system's side)")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)

    return _render("comparative", draw, figsize)


def agreement_rows(result: dict) -> list[dict]:
    """Every metric's alpha with its interval, named as the paper does (label_b, dim_d, dim_c)."""
    rows = []
    for section, suffix in _METHOD_SUFFIX.items():
        for row in (result.get(section) or {}).get("agreement") or []:
            name = row.get("label") or row.get("dimension")
            mark = "t" if section == "likert" and row.get("level") == "turn" else suffix
            rows.append({**row, "metric": f"{name}_{mark}", "method": section})
    return rows


def agreement_plot(result: dict) -> str | None:
    rows = [row for row in agreement_rows(result) if row["alpha"] is not None]
    if not rows:
        return None
    names = [row["metric"] for row in rows]
    figsize = (3.5 + 0.28 * len(rows), 2.2 + _label_inches(names))

    def draw(figure):
        ax = figure.subplots()
        xs = range(len(rows))
        ax.errorbar(
            list(xs),
            [_number(row["alpha"]) for row in rows],
            yerr=_errors(rows, "alpha"),
            fmt="o",
            color=_palette()[0],
            elinewidth=0.8,
            capsize=2,
            gid="alpha",
        )
        ax.axhline(0, color="#888", linewidth=0.6)
        ax.set_xticks(list(xs), names, rotation=90)
        ax.set_ylabel("Krippendorff's alpha")
        # A pilot may have alphas without intervals (too few units): the axis still has to
        # hold every point and every bound there is.
        lows = [_number(r[key]) for r in rows for key in ("alpha", "low") if r[key] is not None]
        ax.set_ylim(min([-0.1, *(v for v in lows if not math.isnan(v))]), 1)

    return _render("agreement", draw, figsize)


def dimensional_plots(result: dict) -> dict[str, str]:
    """The plots of the behaviour, Likert and comparative sections the result has."""
    plots = {
        "behaviours-undesirable": behaviour_rate_plot(result, "undesirable"),
        "behaviours-desirable": behaviour_rate_plot(result, "desirable"),
        "likert-dialogue": likert_mean_plot(result, "dialogue"),
        "likert-turn": likert_mean_plot(result, "turn"),
        "comparative": comparative_plot(result),
        "agreement": agreement_plot(result),
    }
    return {name: svg for name, svg in plots.items() if svg is not None}


def available_dimensional_plots(result: dict) -> list[str]:
    """Names of the dimensional plots of a result, in page order (without drawing them)."""
    behaviours = {row["group"] for row in (result.get("behaviours") or {}).get("rates") or []}
    likert = {row["level"] for row in (result.get("likert") or {}).get("means") or []}
    names = [f"behaviours-{group}" for group in ("undesirable", "desirable") if group in behaviours]
    names += [f"likert-{level}" for level in ("dialogue", "turn") if level in likert]
    if (result.get("comparative") or {}).get("results"):
        names.append("comparative")
    if any(row["alpha"] is not None for row in agreement_rows(result)):
        names.append("agreement")
    return names


# --- Human versus automatic (analysis.reports.human_vs_automatic) -----------------------------
# Two plots per dimension, named by the dimension's position (dimension names may hold spaces,
# plot names are URL slugs): the per-system scatter and the convergence curve.


def _versus_dimensions(result: dict) -> list[dict]:
    return result.get("dimensions") or [] if result.get("kind") == "human_vs_automatic" else []


def versus_plot_names(result: dict) -> list[dict]:
    """Per dimension, the names of its plots that ``versus_plots`` draws (None when there is
    nothing to draw): ``[{"dimension", "scatter", "convergence"}]``."""
    names = []
    for index, section in enumerate(_versus_dimensions(result)):
        both = [
            row
            for row in section["systems"]
            if row["human_mean"] is not None and row["judge_mean"] is not None
        ]
        names.append(
            {
                "dimension": section["dimension"],
                "scatter": f"versus-scatter-{index}" if both else None,
                "convergence": f"versus-convergence-{index}"
                if any(p["spearman_mean"] is not None for p in section["convergence"])
                else None,
            }
        )
    return names


def versus_scatter(result: dict, section: dict, name: str) -> str:
    """Each system's mean score by the humans (x) against the judge's (y), labelled."""
    rows = [
        r for r in section["systems"] if r["human_mean"] is not None and r["judge_mean"] is not None
    ]

    def draw(figure):
        ax = figure.add_subplot()
        for row in rows:
            ax.scatter(
                row["human_mean"],
                row["judge_mean"],
                color=_color(result, row["system"]),
                s=36,
                zorder=3,
                gid=f"point-{row['system']}",
            )
            ax.annotate(
                row["system"],
                (row["human_mean"], row["judge_mean"]),
                xytext=(4, 4),
                textcoords="offset points",
                fontsize=9,
            )
        values = [r["human_mean"] for r in rows] + [r["judge_mean"] for r in rows]
        low, high = min(values), max(values)
        pad = (high - low) * 0.1 or 0.5
        ax.plot(
            [low - pad, high + pad],
            [low - pad, high + pad],
            linestyle=":",
            color="#888",
            linewidth=0.8,
            gid="identity",
        )
        ax.set_xlabel(f"human mean score ({section['dimension']})")
        ax.set_ylabel("judge mean score")
        ax.grid(color="#e5e9ef")

    width = 4.8 + _label_inches(r["system"] for r in rows) / 2
    return _render(name, draw, (width, 4.2))


def versus_convergence(result: dict, section: dict, name: str) -> str:
    """Spearman and Kendall correlation of the judge's ranking from n dialogues per system
    with the humans' ranking, mean and 95% band over random subsets."""
    points = section["convergence"]
    n = [p["n_dialogues"] for p in points]

    def draw(figure):
        ax = figure.add_subplot()
        for statistic, color, marker in (
            ("spearman", _palette()[0], "o"),
            ("kendall", _palette()[1], "s"),
        ):
            ax.fill_between(
                n,
                [_number(p[f"{statistic}_low"]) for p in points],
                [_number(p[f"{statistic}_high"]) for p in points],
                color=color,
                alpha=0.15,
                linewidth=0,
            )
            ax.plot(
                n,
                [_number(p[f"{statistic}_mean"]) for p in points],
                marker=marker,
                color=color,
                label=f"{statistic.capitalize()} (mean, 95% band)",
                gid=f"convergence-{statistic}",
            )
        ax.set_xscale("log")
        ax.set_xticks(n, [str(v) for v in n])
        ax.minorticks_off()
        ax.set_ylim(-1.05, 1.05)
        ax.axhline(0, color="#888", linewidth=0.6)
        ax.set_xlabel("dialogues per system scored by the judge")
        ax.set_ylabel("correlation with the human ranking")
        figure.legend(loc="outside right upper", fontsize=9, frameon=False)
        ax.grid(axis="y", color="#e5e9ef")

    return _render(name, draw, (7.6, 3.6))


def versus_plots(result: dict) -> dict[str, str]:
    """The scatter and convergence plots of each dimension of a human-versus-automatic
    result; nothing for other results."""
    plots = {}
    sections = _versus_dimensions(result)
    for names, section in zip(versus_plot_names(result), sections, strict=True):
        if names["scatter"]:
            plots[names["scatter"]] = versus_scatter(result, section, names["scatter"])
        if names["convergence"]:
            plots[names["convergence"]] = versus_convergence(result, section, names["convergence"])
    return plots
