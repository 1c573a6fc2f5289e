#!/usr/bin/env python3
"""The figures of `svqa report`, drawn with matplotlib from its tidy data (figures.csv: figure,
benchmark, backbone, budget, series, label, x, y) into FIGURE.pdf and FIGURE.svg (for papers) and
FIGURE.png (quick looks), and figures.json: per figure its files, axes limits and ticks, points,
point labels and each series' points.

Every text is literal: a `$` in a label is a dollar, never matplotlib's mathtext. Every figure has a
caption line under its axes naming the benchmark, backbone and budget. Series with the same points
are drawn once, named together ("A = B"), so none hides under another. Axes of quantities that
cannot be negative show no negative tick; an accuracy axis spans at least 10 points, inside 0-100.
Rows whose x or y is not a finite number are left out (and counted in figures.json).

Point labels (accuracy figures: a run's display name beside its point) never overlap one another,
a marker or the axes' edge: each goes to the first free place around its point, nearest first,
with a leader line when it sits away from it; a label with no free place becomes a number at its
point, named in a key under the axes. Axes are fitted to the data with a margin on every side.

Usage: figures.py --data OUT/figures.csv --out OUT
"""
import argparse
import csv
import json
import math
import os
import pathlib
import sys
import tempfile
import textwrap
from collections import OrderedDict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.text import Text  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402
from matplotlib.transforms import Bbox  # noqa: E402

# Text stays text in the SVG (a paper's editor can change it; tests read it), and embeds as
# TrueType in the PDF.
matplotlib.rcParams.update({"svg.fonttype": "none", "pdf.fonttype": 42, "font.size": 9, "axes.titlesize": 9,
                            "legend.fontsize": 8, "savefig.dpi": 200})

MARGIN = 0.08  # of the data's range, on each side of every axis
LABEL_SIZE = 7.5
MARKERS = "osD^vP*X<>h"
TITLES = {
    "accuracy_vs_memory": ("memory tokens (K/V held when a question is asked, mean)", "accuracy (%)"),
    "accuracy_vs_inference": ("inference tokens (attended while answering, mean)", "accuracy (%)"),
    "ttft_vs_stream_time": ("stream time when asked (s)", "time to first token (s)"),
    "retrieval_temporal_bias": ("how far back the retrieved block lies (0: just before the question, 1: stream start)",
                                "share of retrieved blocks"),
    "retrieval_scores": ("block start (s into the stream)", "retrieval score (min–max scaled per run)"),
}


def literal(text):
    """`text` as matplotlib draws it verbatim: dollars escaped, so no mathtext (which fails on an
    odd count and eats an even one)."""
    return text.replace("$", r"\$")


def legend_name(name):
    """A series' name in the legend, wrapped at 30 characters: a long one (runs named together)
    would otherwise squeeze the axes."""
    return literal(textwrap.fill(name, 30, break_long_words=False))


def read_rows(path):
    """The figures' rows by figure, and how many rows had a non-finite x or y (left out)."""
    figures, dropped = OrderedDict(), 0
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            row["x"] = float(row["x"])
            row["y"] = float(row["y"]) if row["y"] != "" else None
            if not math.isfinite(row["x"]) or (row["y"] is not None and not math.isfinite(row["y"])):
                dropped += 1
                continue
            figures.setdefault(row["figure"], []).append(row)
    return figures, dropped


def fitted(values, log=False):
    """Axis limits holding every value with MARGIN of the range on each side (a lone value: ±10 %)."""
    lo, hi = min(values), max(values)
    if log:
        lo, hi = math.log10(lo), math.log10(hi)
    span = hi - lo
    if span == 0:
        span = abs(hi) * 0.2 if hi else 1.0
        pad = span / 2
    else:
        pad = span * MARGIN
    lo, hi = lo - pad, hi + pad
    return (10 ** lo, 10 ** hi) if log else (lo, hi)


def bounded(values, floor, ceiling, min_span):
    """Limits for a quantity between `floor` and `ceiling` (accuracy 0-100, a share 0-1): the data's
    range widened to at least `min_span` and moved inside the bounds, then MARGIN on each side."""
    lo, hi = min(values), max(values)
    if hi - lo < min_span:
        mid = (lo + hi) / 2
        lo, hi = mid - min_span / 2, mid + min_span / 2
    if lo < floor:
        lo, hi = floor, hi + (floor - lo)
    if hi > ceiling:
        lo, hi = max(floor, lo - (hi - ceiling)), ceiling
    pad = (hi - lo) * MARGIN
    return lo - pad, hi + pad


def nonnegative_ticks(ax):
    """At most 6 ticks at round steps (a narrow axes' tick labels otherwise run together), none below
    zero on the axes of counts, times, accuracies and shares (their margin may reach below it); on a
    linear axis only."""
    for axis, scale, limits in ((ax.xaxis, ax.get_xscale(), ax.get_xlim()), (ax.yaxis, ax.get_yscale(), ax.get_ylim())):
        if scale == "linear":
            axis.set_major_locator(MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10]))
            axis.set_ticks([t for t in axis.get_majorticklocs() if t >= 0 and limits[0] <= t <= limits[1]])


def series_of(rows, keep_all=False):
    """Each series' rows, in first-seen order; series of two points or more with the same points are
    one, named together ("A = B"), so none hides under the other. `keep_all`: the one series holds
    every merged series' rows (the accuracy figures label each run's points), else the first's."""
    series = OrderedDict()
    for row in rows:
        if row["series"]:
            series.setdefault(row["series"], []).append(row)
    merged, seen = OrderedDict(), {}
    for name, pts in series.items():
        key = tuple(sorted((p["x"], p["y"]) for p in pts))
        if len(pts) > 1 and key in seen:
            first = seen[key]
            merged[f"{first} = {name}"] = merged.pop(first) + (pts if keep_all else [])
            seen[key] = f"{first} = {name}"
            continue
        seen.setdefault(key, name)
        merged[name] = pts
    return merged


def overlaps(a, b, pad=1.0):
    return a.x0 < b.x1 + pad and b.x0 < a.x1 + pad and a.y0 < b.y1 + pad and b.y0 < a.y1 + pad


def inside(box, frame):
    return box.x0 >= frame.x0 and box.x1 <= frame.x1 and box.y0 >= frame.y0 and box.y1 <= frame.y1


# Places around a point, nearest first: (dx, dy) in points, and the text's anchor there.
DIRECTIONS = [(1, 0, "left", "center"), (-1, 0, "right", "center"), (0, 1, "center", "bottom"),
              (0, -1, "center", "top"), (1, 1, "left", "bottom"), (-1, 1, "right", "bottom"),
              (1, -1, "left", "top"), (-1, -1, "right", "top")]
RADII = [5, 12, 22, 34, 48]


def marker_boxes(ax, points):
    boxes = []
    for x, y in points:
        px, py = ax.transData.transform((x, y))
        boxes.append(Bbox.from_extents(px - 4, py - 4, px + 4, py + 4))
    return boxes


def place_labels(fig, ax, points, labels, taken, gid):
    """Annotates each point with its label at the nearest place around it where the text overlaps
    nothing in `taken` (placed labels, markers) and stays inside the axes; returns the indices of
    the labels that found no place. `taken` grows by each placed label's box."""
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    own = marker_boxes(ax, points)  # a label may touch its own point's marker (and those drawn at the same place)
    unplaced = []
    for i, ((x, y), text) in enumerate(zip(points, labels)):
        placed = False
        for radius in RADII:
            for dx, dy, ha, va in DIRECTIONS:
                far = radius > RADII[1]
                ann = ax.annotate(literal(text), (x, y), xytext=(dx * radius, dy * radius), textcoords="offset points",
                                  ha=ha, va=va, fontsize=LABEL_SIZE, gid=f"{gid}-{i}",
                                  arrowprops={"arrowstyle": "-", "lw": 0.5, "color": "0.6", "shrinkA": 1,
                                              "shrinkB": 3} if far else None)
                ann.update_positions(renderer)
                box = Text.get_window_extent(ann, renderer)  # the text alone, not its leader line
                if inside(box, frame) and not any(overlaps(box, t) for t in taken if t.bounds != own[i].bounds):
                    taken.append(box)
                    placed = True
                    break
                ann.remove()
            if placed:
                break
        if not placed:
            unplaced.append(i)
    return unplaced


def accuracy_figure(ax, rows):
    series = series_of(rows, keep_all=True)
    xs = [r["x"] for r in rows]
    log = min(xs) > 0 and max(xs) / min(xs) > 30
    if log:
        ax.set_xscale("log")
    points, labels = [], []
    for k, (name, pts) in enumerate(series.items()):
        pts = sorted(pts, key=lambda r: (r["x"], r["y"]))
        ax.plot([p["x"] for p in pts], [p["y"] for p in pts], marker=MARKERS[k % len(MARKERS)], ms=5, lw=1,
                label=legend_name(name), color=f"C{k % 10}")
        for p in pts:
            points.append((p["x"], p["y"]))
            labels.append(p["label"])
    ax.set_xlim(*fitted(xs, log))
    ax.set_ylim(*bounded([r["y"] for r in rows], 0, 100, 10))
    return points, labels


def line_figure(ax, name, rows):
    """The figure's series as lines (a histogram's as steps); a series with several values at one x
    (MuKV's patch, frame and segment blocks start together) as markers only, not a comb of spikes.
    A row without series marks a time (the question's): a dashed line, named in the title."""
    for k, (series, pts) in enumerate(series_of(rows).items()):
        pts = sorted(pts, key=lambda r: r["x"])
        xs = [p["x"] for p in pts]
        stacked = len(set(xs)) < len(xs)
        ax.plot(xs, [p["y"] for p in pts], marker=MARKERS[k % len(MARKERS)] if stacked or len(pts) <= 40 else None,
                ms=3.5, lw=0 if stacked else 1, label=legend_name(series), color=f"C{k % 10}",
                drawstyle="steps-mid" if name == "retrieval_temporal_bias" else "default")
    marks = [r for r in rows if not r["series"]]
    for r in marks:
        ax.axvline(r["x"], color="0.4", ls="--", lw=0.8)
    if marks:
        ax.set_title(literal("; ".join(f"question {r['label']} asked at {r['x']:g} s (dashed line)" for r in marks)),
                     loc="left")
    xs = [r["x"] for r in rows]
    ys = [r["y"] for r in rows if r["y"] is not None]
    ax.set_xlim(*fitted(xs))
    ax.set_ylim(*(bounded(ys, 0, 1, 0.1) if name in ("retrieval_temporal_bias", "retrieval_scores") else fitted(ys)))


def caption(rows):
    """The figure's caption line: its benchmark(s), backbone(s) and budget(s)."""
    def values(column):
        seen = OrderedDict((r.get(column) or "", None) for r in rows)
        return ", ".join(v for v in seen if v) or "?"
    return f"benchmark: {values('benchmark')} · backbone: {values('backbone')} · budget: {values('budget')}"


def file_mode():
    """The mode other outputs get (0666 less the umask): mkstemp's own 0600 would hide a figure from
    the group that reads the results."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def save(fig, out, name):
    files = []
    for ext in ("pdf", "svg", "png"):
        path = out / f"{name}.{ext}"
        # Written beside, then renamed: a reader never sees half a figure.
        fd, tmp = tempfile.mkstemp(dir=out, prefix=f".{name}.", suffix=f".{ext}")
        os.close(fd)
        os.chmod(tmp, file_mode())
        fig.savefig(tmp, format=ext, bbox_inches="tight")
        os.replace(tmp, path)
        files.append(str(path))
    return files


def add_caption(fig, ax, text):
    """The caption line under everything the axes drew (tick labels, axis label, key)."""
    renderer = fig.canvas.get_renderer()
    box = ax.get_tightbbox(renderer)
    width, height = fig.bbox.width, fig.bbox.height
    fig.text(box.x0 / width, (box.y0 - 4) / height, literal(text), ha="left", va="top", fontsize=LABEL_SIZE,
             color="0.3", gid="caption")


def visible_ticks(axis, limits):
    lo, hi = sorted(limits)
    return [float(t) for t in axis.get_majorticklocs() if lo <= t <= hi]


def draw(name, rows, out):
    kind = next(k for k in TITLES if name.startswith(k))
    fig, ax = plt.subplots(figsize=(5.5, 3.6), layout="constrained")
    xlabel, ylabel = TITLES[kind]
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, lw=0.4, color="0.88")
    ax.set_axisbelow(True)
    points, labels, key = [], [], []
    series = series_of(rows)
    if kind.startswith("accuracy_vs"):
        points, labels = accuracy_figure(ax, rows)
        nonnegative_ticks(ax)
        if any(len(pts) > 1 for pts in series.values()):  # a method over budgets: a line, named in a legend
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0, frameon=False)
        fig.canvas.draw()
        fig.set_layout_engine("none")  # the layout stays as measured: placed labels keep their distances
        taken = marker_boxes(ax, points)
        key = place_labels(fig, ax, points, labels, taken, "point-label")
        # No free place: a number beside the point (placed the same way), the label in a key under the axes.
        place_labels(fig, ax, [points[i] for i in key], [str(n + 1) for n in range(len(key))], taken, "point-key")
        if key:
            ax.text(0, -0.22, literal("   ".join(f"{n + 1}: {labels[i]}" for n, i in enumerate(key))),
                    transform=ax.transAxes, fontsize=LABEL_SIZE, va="top", wrap=True, gid="point-key")
    else:
        line_figure(ax, kind, rows)
        nonnegative_ticks(ax)
        if series:
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0, frameon=False)
        fig.canvas.draw()
        fig.set_layout_engine("none")
    add_caption(fig, ax, caption(rows))
    files = save(fig, out, name)
    entry = {"name": name, "files": files, "xlim": list(ax.get_xlim()), "ylim": list(ax.get_ylim()),
             "xscale": ax.get_xscale(), "xticks": visible_ticks(ax.xaxis, ax.get_xlim()),
             "yticks": visible_ticks(ax.yaxis, ax.get_ylim()), "ylabel": ylabel, "caption": caption(rows),
             "points": [list(p) for p in points] or [[r["x"], r["y"]] for r in rows if r["y"] is not None],
             "labels": labels, "keyed": [labels[i] for i in key],
             "series": {n: [[p["x"], p["y"]] for p in pts] for n, pts in series.items()}}
    plt.close(fig)
    return entry


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, type=pathlib.Path)
    parser.add_argument("--out", required=True, type=pathlib.Path)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rows, dropped = read_rows(args.data)
    figures = [draw(name, figure_rows, args.out) for name, figure_rows in rows.items()]
    listing = args.out / "figures.json"
    tmp = listing.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({"figures": figures, "dropped_rows": dropped,
                               "script": str(pathlib.Path(__file__).resolve()), "python": sys.executable}, indent=1) + "\n")
    os.replace(tmp, listing)


if __name__ == "__main__":
    main()
