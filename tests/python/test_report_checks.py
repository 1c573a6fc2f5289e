"""The report checks themselves fail where they should: two labels drawn over each other are found
overlapping from the SVG's text elements, two apart are not; a point on the axes' edge is caught."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from report_checks import boxes_overlap, check_axes, svg_texts, text_box  # noqa: E402


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
