"""The report checks themselves fail where they should: two labels drawn over each other are found
overlapping from the SVG's text elements, two apart are not; a point on the axes' edge is caught."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from report_checks import boxes_overlap, check_axes, check_figure_layout, svg_texts, text_box  # noqa: E402


def label_boxes(tmp_path, offsets):
    matplotlib.rcParams["svg.fonttype"] = "none"
    fig, ax = plt.subplots()
    for i, dx in enumerate(offsets):
        ax.annotate(f"label {i}", (0.5, 0.5), xytext=(dx, 0), textcoords="offset points", gid=f"point-label-{i}")
    fig.savefig(tmp_path / "f.svg")
    plt.close(fig)
    return [text_box(*t) for t in sorted(svg_texts(tmp_path / "f.svg", "point-label"))]


def test_overlapping_labels_are_found_and_separate_ones_are_not(tmp_path):
    a, b = label_boxes(tmp_path, [0, 12])  # "label 0" is wider than 12 points
    assert boxes_overlap(a, b)
    a, b = label_boxes(tmp_path, [0, 60])
    assert not boxes_overlap(a, b)


def test_a_point_on_the_axes_edge_fails_the_margin_check():
    check_axes({"name": "f", "xlim": [0, 10], "ylim": [0, 1], "xscale": "linear", "points": [[5, 0.5]]})
    with pytest.raises(AssertionError):
        check_axes({"name": "f", "xlim": [0, 10], "ylim": [0, 1], "xscale": "linear", "points": [[10, 0.5]]})


def layout_figure(tmp_path, series, note_at=None):
    """A figure like figures.py's: a legend right of the axes, a caption; `note_at`: a text there (axes fraction)."""
    matplotlib.rcParams["svg.fonttype"] = "none"
    fig, ax = plt.subplots(figsize=(5.5, 3.6), layout="constrained")
    for name, points in series.items():
        ax.plot([p[0] for p in points], [p[1] for p in points], label=name)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0, frameon=False)
    if note_at:
        ax.annotate("asked: synthetic/q6", note_at, xycoords="axes fraction", ha="left", va="top")
    fig.text(0, -0.1, "benchmark: b · backbone: m · budget: 8", gid="caption")
    fig.savefig(tmp_path / "f.svg", bbox_inches="tight")
    plt.close(fig)


def test_text_over_the_legend_and_a_series_hidden_under_its_twin_are_found(tmp_path):
    twins = {"ReKV": [(1, 1), (2, 2)], "Bank recent": [(1, 1), (2, 2)], "MuKV": [(1, 2), (2, 1)]}
    layout_figure(tmp_path, {"ReKV": twins["ReKV"], "MuKV": twins["MuKV"]})
    check_figure_layout(tmp_path, "f.svg", {"ReKV": twins["ReKV"], "MuKV": twins["MuKV"]})
    layout_figure(tmp_path, {"ReKV": twins["ReKV"], "MuKV": twins["MuKV"]}, note_at=(0.98, 1.0))  # runs into the legend
    with pytest.raises(AssertionError, match="legend|overlap"):
        check_figure_layout(tmp_path, "f.svg", {"ReKV": twins["ReKV"], "MuKV": twins["MuKV"]})
    layout_figure(tmp_path, twins)
    with pytest.raises(AssertionError, match="identical series"):
        check_figure_layout(tmp_path, "f.svg", twins)


def test_a_negative_tick_and_a_missing_caption_are_found(tmp_path):
    matplotlib.rcParams["svg.fonttype"] = "none"
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 0])
    ax.set_ylim(-0.4, 0.4)  # equal accuracies drawn as today: -0.4 ... 0.4
    fig.savefig(tmp_path / "f.svg")
    plt.close(fig)
    with pytest.raises(AssertionError, match="negative tick"):
        check_figure_layout(tmp_path, "f.svg")
