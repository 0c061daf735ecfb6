"""Plots: valid SVG, one labelled curve per system, significance marks, no leaked state."""

import json
import re
import xml.etree.ElementTree as ET

import matplotlib
import pytest

from analysis.pages.plots import (
    available_plots,
    cox_forest,
    render_plots,
    stability_curve,
    survival_plots,
    system_plot_name,
    win_rate_heatmap,
)
from tests.analysis import builders

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def result():
    return builders.canned_result()[0]


def groups(svg: str) -> dict[str, ET.Element]:
    root = ET.fromstring(svg)
    return {g.get("id"): g for g in root.iter(f"{SVG}g") if g.get("id")}


def texts(svg: str) -> list[str]:
    return [t.text or "" for t in ET.fromstring(svg).iter(f"{SVG}text")]


def test_the_survival_plot_has_one_curve_per_system(result):
    svg = survival_plots(result)["survival"]
    found = groups(svg)
    curves = sorted(name[len("curve-") :] for name in found if name.startswith("curve-"))
    assert curves == sorted(result["systems"])
    n_lengths = len(result["survival"]["segment_lengths"])
    for system in result["systems"]:
        group = found[f"curve-{system}"]
        (line,) = group.findall(f"{SVG}path")
        # A step function from k=0 through every segment length: a rise and a run per length.
        assert line.get("d").count("L") == 2 * n_lengths
        assert len(list(group.iter(f"{SVG}use"))) == n_lengths  # a marker per segment length
    assert "reference-human" in found
    assert set(result["systems"]) <= set(texts(svg))  # the legend names each system


def test_a_system_plot_highlights_that_system(result):
    system = result["systems"][0]
    svg = survival_plots(result)[system_plot_name(system)]
    legend = texts(svg)
    assert system in legend and not set(result["systems"][1:]) & set(legend)
    assert "human (controls)" in legend
    assert sum(1 for name in groups(svg) if name.startswith("curve-")) == len(result["systems"])


def line_widths(svg: str) -> dict[str, str]:
    """The stroke width of each system's curve (SVG leaves out the default width, 1)."""
    widths = {}
    for name, group in groups(svg).items():
        if name.startswith("curve-"):
            (line,) = group.findall(f"{SVG}path")
            width = re.search(r"stroke-width: ([\d.]+)", line.get("style"))
            widths[name[len("curve-") :]] = width[1] if width else "1"
    return widths


def test_each_system_plot_draws_its_own_system_bold_and_the_others_thin(result):
    plots = survival_plots(result)
    assert set(line_widths(plots["survival"]).values()) == {"2"}
    for system in result["systems"]:
        widths = line_widths(plots[system_plot_name(system)])
        assert widths.pop(system) == "2"
        assert set(widths.values()) == {"1"}


def axes_frame(svg: str) -> str:
    """The path of the axes' background patch, which places the axes in the figure."""
    return groups(svg)["patch_2"].find(f"{SVG}path").get("d")


def test_the_system_plots_share_the_axes_of_the_overall_plot(result):
    plots = survival_plots(result)
    frames = {axes_frame(plots[system_plot_name(s)]) for s in result["systems"]}
    assert frames == {axes_frame(plots["survival"])}


def test_the_heatmap_marks_significant_pairs_only():
    result = {
        "systems": ["x", "y", "z"],
        "pairwise": [
            {"a": "x", "b": "y", "win_rate_a": 0.8, "p_adjusted": 0.001},
            {"a": "x", "b": "z", "win_rate_a": 0.55, "p_adjusted": 0.6},
            {"a": "y", "b": "z", "win_rate_a": None, "p_adjusted": None},
        ],
    }
    cells = [t for t in texts(win_rate_heatmap(result)) if re.fullmatch(r"\d\.\d\d\*?", t)]
    assert sorted(cells) == ["0.20*", "0.45", "0.55", "0.80*"]


def test_the_cox_plot_has_one_marker_per_system_and_feature(result):
    found = groups(cox_forest(result))
    expected = {
        f"cox-{system}-{feature}"
        for system in result["survival"]["cox"]
        for feature in result["survival"]["cox"][system]
    }
    assert expected and expected <= set(found)


def test_the_stability_plot_draws_both_shares(result):
    assert {"stability-reproduced", "stability-modal"} <= set(groups(stability_curve(result)))


def test_render_plots_draws_what_available_plots_announces(result):
    plots = render_plots(result)
    assert sorted(plots) == sorted(available_plots(result))
    assert {"heatmap", "survival", "cox", "stability"} <= set(plots)
    assert all(svg.lstrip().startswith("<?xml") and "</svg>" in svg for svg in plots.values())


def test_nothing_to_draw_gives_no_plot():
    empty = {
        "systems": ["a"],
        "pairwise": [],
        "survival": {"curves": {}, "cox": {}},
        "stability": {},
    }
    assert render_plots(empty) == {} == dict.fromkeys(available_plots(empty), 1)


def test_rendering_is_deterministic_and_leaves_no_global_state(result):
    import matplotlib.pyplot as plt

    before = dict(matplotlib.rcParams)
    figures = plt.get_fignums()
    assert survival_plots(result) == survival_plots(result)
    assert plt.get_fignums() == figures
    assert dict(matplotlib.rcParams) == before


def test_a_pair_never_compared_is_marked_unlike_the_diagonal():
    result = {
        "systems": ["x", "y", "z"],
        "pairwise": [
            {"a": "x", "b": "y", "win_rate_a": 0.8, "p_adjusted": 0.5},
            {"a": "y", "b": "z", "win_rate_a": None, "p_adjusted": None},
        ],
    }
    svg = win_rate_heatmap(result)
    # x and z never met: both of their cells say so; the diagonal stays empty.
    assert {"empty-0-2", "empty-2-0", "empty-1-2", "empty-2-1"} == {
        name for name in groups(svg) if name.startswith("empty-")
    }
    assert texts(svg).count("not") == 2 and texts(svg).count("ties") == 2


LONG = "a-system-with-a-really-very-long-name-v2-finetuned-on-everything"


def drawn_figures(monkeypatch, plot, result):
    """The extents of what `plot` prints, laid out by Agg so they can be measured, with the
    size of the figure, one pair per plot printed."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from analysis.pages import plots

    captured = []

    def capture(figure, name):
        FigureCanvasAgg(figure).draw()
        captured.append((figure.get_size_inches(), figure.get_tightbbox()))
        return "<svg/>"

    monkeypatch.setattr(plots, "_svg", capture)
    plot(result)
    return captured


@pytest.mark.parametrize(
    ("plot", "one_per_system"),
    [(win_rate_heatmap, False), (survival_plots, True), (cox_forest, False)],
)
def test_long_system_names_are_never_cut_off(monkeypatch, result, plot, one_per_system):
    old = result["systems"][0]
    renamed = json.loads(json.dumps(result).replace(json.dumps(old), json.dumps(LONG)))
    assert LONG in renamed["systems"]
    drawn = drawn_figures(monkeypatch, plot, renamed)
    assert len(drawn) == 1 + one_per_system * len(result["systems"])
    for (width, height), extent in drawn:
        assert extent.x0 >= -0.01 and extent.y0 >= -0.01
        assert extent.x1 <= width + 0.01 and extent.y1 <= height + 0.01


def test_agreement_metrics_are_named_by_method_as_in_the_paper():
    from analysis.pages.plots import agreement_rows

    entry = {"alpha": 0.5, "low": 0.4, "high": 0.6}
    result = {
        "behaviours": {"agreement": [{"label": "ignore", **entry}]},
        "likert": {
            "agreement": [
                {"dimension": "quality", "level": "turn", **entry},
                {"dimension": "quality", "level": "dialogue", **entry},
            ]
        },
        "comparative": {"agreement": [{"dimension": "quality", **entry}]},
    }
    names = [row["metric"] for row in agreement_rows(result)]
    assert names == ["ignore_b", "quality_t", "quality_d", "quality_c"]


def test_the_agreement_plot_draws_alphas_that_have_no_interval():
    # A pilot: two annotators of three items give alphas whose resamples never vary.
    from analysis.pages.plots import agreement_plot

    rows = [{"dimension": "quality", "alpha": -0.4, "low": None, "high": None, "units": 3}]

    svg = agreement_plot({"comparative": {"agreement": rows}})

    assert svg is not None and 'id="alpha' in svg


# --- Human versus automatic ---------------------------------------------------------------------


def _versus_result(**changes):
    from analysis.reports import build_report
    from tests.analysis.reports.test_human_vs_automatic import FAST, likert_world

    data = likert_world()
    return build_report(type(data)(**{**data.__dict__, **changes}), FAST)


def test_versus_plots_draw_each_systems_point_and_both_convergence_curves():
    from analysis.pages.plots import versus_plot_names, versus_plots

    result = _versus_result()
    assert versus_plot_names(result) == [
        {
            "dimension": "overall",
            "scatter": "versus-scatter-0",
            "convergence": "versus-convergence-0",
        }
    ]
    plots = versus_plots(result)
    assert set(plots) == {"versus-scatter-0", "versus-convergence-0"}
    for system in result["systems"]:
        assert f'id="point-{system}"' in plots["versus-scatter-0"]
    assert 'id="point-partner"' not in plots["versus-scatter-0"]  # never ranked
    assert 'id="convergence-spearman"' in plots["versus-convergence-0"]
    assert 'id="convergence-kendall"' in plots["versus-convergence-0"]
    assert render_plots(result).keys() >= plots.keys()


def test_an_undefined_convergence_curve_is_not_drawn():
    from analysis.pages.plots import versus_plots

    data_flat = _versus_result(judge_scores=())
    assert versus_plots(data_flat) == {}
    flat = _versus_result()
    for point in flat["dimensions"][0]["convergence"]:
        point["spearman_mean"] = None
    assert set(versus_plots(flat)) == {"versus-scatter-0"}


def test_other_results_have_no_versus_plots():
    from analysis.pages.plots import versus_plots

    result, _ = builders.canned_result()
    assert versus_plots(result) == {}


def test_a_curve_of_a_system_outside_the_ranking_still_gets_its_plot(result):
    unranked = json.loads(json.dumps(result))
    unranked["systems"] = unranked["systems"][1:]
    left_out = result["systems"][0]
    plots = survival_plots(unranked)
    announced = [name for name in available_plots(unranked) if name.startswith("survival")]
    assert sorted(plots) == sorted(announced)
    assert system_plot_name(left_out) in plots
    assert set(line_widths(plots[system_plot_name(left_out)]).values()) == {"1"}
