#!/usr/bin/env python3
"""The figures of `svqa report`, drawn with matplotlib from its tidy data (figures.csv: figure,
benchmark, series, label, x, y) into FIGURE.pdf and FIGURE.svg (for papers) and FIGURE.png (quick
looks), and figures.json: per figure its files, axes limits, points and point labels.

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
import tempfile
from collections import OrderedDict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.text import Text  # noqa: E402
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


def read_rows(path):
    figures = OrderedDict()
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            row["x"] = float(row["x"])
            row["y"] = float(row["y"]) if row["y"] != "" else None
            figures.setdefault(row["figure"], []).append(row)
    return figures


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


def series_of(rows):
    series = OrderedDict()
    for row in rows:
        if row["series"]:
            series.setdefault(row["series"], []).append(row)
    return series


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
                ann = ax.annotate(text, (x, y), xytext=(dx * radius, dy * radius), textcoords="offset points",
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
    series = series_of(rows)
    xs = [r["x"] for r in rows]
    log = min(xs) > 0 and max(xs) / min(xs) > 30
    if log:
        ax.set_xscale("log")
    points, labels = [], []
    for k, (name, pts) in enumerate(series.items()):
        pts = sorted(pts, key=lambda r: (r["x"], r["y"]))
        ax.plot([p["x"] for p in pts], [p["y"] for p in pts], marker=MARKERS[k % len(MARKERS)], ms=5, lw=1,
                label=name, color=f"C{k % 10}")
        for p in pts:
            points.append((p["x"], p["y"]))
            labels.append(p["label"])
    ax.set_xlim(*fitted(xs, log))
    ax.set_ylim(*fitted([r["y"] for r in rows]))
    return points, labels


def line_figure(ax, name, rows):
    for k, (series, pts) in enumerate(series_of(rows).items()):
        pts = sorted(pts, key=lambda r: r["x"])
        ax.plot([p["x"] for p in pts], [p["y"] for p in pts], marker=MARKERS[k % len(MARKERS)] if len(pts) <= 40 else None,
                ms=3.5, lw=1, label=series, color=f"C{k % 10}",
                drawstyle="steps-mid" if name == "retrieval_temporal_bias" else "default")
    for r in rows:
        if not r["series"]:  # a marked time (the question's)
            ax.axvline(r["x"], color="0.4", ls="--", lw=0.8)
            ax.annotate(r["label"], (r["x"], 1), xycoords=("data", "axes fraction"), xytext=(3, -3),
                        textcoords="offset points", ha="left", va="top", fontsize=LABEL_SIZE, color="0.3")
    xs = [r["x"] for r in rows]
    ys = [r["y"] for r in rows if r["y"] is not None]
    ax.set_xlim(*fitted(xs))
    ax.set_ylim(*fitted(ys))


def save(fig, out, name):
    files = []
    for ext in ("pdf", "svg", "png"):
        path = out / f"{name}.{ext}"
        # Written beside, then renamed: a reader never sees half a figure.
        fd, tmp = tempfile.mkstemp(dir=out, prefix=f".{name}.", suffix=f".{ext}")
        os.close(fd)
        fig.savefig(tmp, format=ext, bbox_inches="tight")
        os.replace(tmp, path)
        files.append(str(path))
    return files


def draw(name, rows, out):
    kind = next(k for k in TITLES if name.startswith(k))
    fig, ax = plt.subplots(figsize=(5.5, 3.6), layout="constrained")
    xlabel, ylabel = TITLES[kind]
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, lw=0.4, color="0.88")
    ax.set_axisbelow(True)
    points, labels, key = [], [], []
    if kind.startswith("accuracy_vs"):
        points, labels = accuracy_figure(ax, rows)
        if any(len(pts) > 1 for pts in series_of(rows).values()):  # a method over budgets: a line, named in a legend
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0, frameon=False)
        fig.canvas.draw()
        fig.set_layout_engine("none")  # the layout stays as measured: placed labels keep their distances
        taken = marker_boxes(ax, points)
        key = place_labels(fig, ax, points, labels, taken, "point-label")
        # No free place: a number beside the point (placed the same way), the label in a key under the axes.
        place_labels(fig, ax, [points[i] for i in key], [str(n + 1) for n in range(len(key))], taken, "point-key")
        if key:
            ax.text(0, -0.22, "   ".join(f"{n + 1}: {labels[i]}" for n, i in enumerate(key)), transform=ax.transAxes,
                    fontsize=LABEL_SIZE, va="top", wrap=True, gid="point-key")
    else:
        line_figure(ax, kind, rows)
        if len(series_of(rows)) > 0:
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0, frameon=False)
    files = save(fig, out, name)
    entry = {"name": name, "files": files, "xlim": list(ax.get_xlim()), "ylim": list(ax.get_ylim()),
             "xscale": ax.get_xscale(), "points": [list(p) for p in points] or [[r["x"], r["y"]] for r in rows if r["y"] is not None],
             "labels": labels, "keyed": [labels[i] for i in key]}
    plt.close(fig)
    return entry


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, type=pathlib.Path)
    parser.add_argument("--out", required=True, type=pathlib.Path)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    figures = [draw(name, rows, args.out) for name, rows in read_rows(args.data).items()]
    listing = args.out / "figures.json"
    tmp = listing.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({"figures": figures}, indent=1) + "\n")
    os.replace(tmp, listing)


if __name__ == "__main__":
    main()
