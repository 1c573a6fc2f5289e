"""Checks of what `svqa report` writes, shared by the tests that run one: the figures (every format,
every run's label present in the SVG, no two texts overlapping and none over the legend, no series
hidden under an identical one, axes holding every point with a margin and no negative tick, a caption
naming benchmark, backbone and budget) and the LaTeX table (compiled with pdflatex, no overfull box)."""

import csv
import itertools
import json
import math
import os
import pathlib
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

from matplotlib.font_manager import FontProperties
from matplotlib.textpath import TextPath

SVG = "{http://www.w3.org/2000/svg}"


def svg_texts(path, group_prefix=""):
    """The <text> elements of an SVG (those inside groups whose id starts with `group_prefix`):
    (text, x, y, font size, anchor, font family), positions in SVG units, (x, y) on the baseline."""
    return [t[0] for t in svg_text_elements(path) if any(g.startswith(group_prefix) for g in t[1])]


def svg_text_elements(path):
    """Every <text> of an SVG as ((text, x, y, size, anchor, family), ids of the groups holding it,
    rotation (degrees, centre) or None). Mathtext (a label with `$...$`) is a translated group of one
    <tspan> per glyph; a line of a multi-line text is placed by its transform."""
    out = []

    def walk(el, groups, at):
        if el.tag == SVG + "g":
            groups = groups + [el.get("id", "")]
            shift = re.search(r"translate\(([-\d.]+)[ ,]+([-\d.]+)\)", el.get("transform", ""))
            if shift:
                at = (at[0] + float(shift.group(1)), at[1] + float(shift.group(2)))
        if el.tag != SVG + "text":
            for child in el:
                walk(child, groups, at)
            return
        spans = list(el.iter(SVG + "tspan"))
        style = el.get("style") or (spans[0].get("style", "") if spans else "")
        size = float(re.search(r"font-size:\s*([\d.]+)px", style).group(1))
        family = re.search(r"font-family:\s*'([^']+)'", style)
        anchor = re.search(r"text-anchor:\s*(\w+)", style)
        text = "".join(t.text or "" for t in spans) if spans else "".join(el.itertext())
        x, y = float(el.get("x", 0)) + at[0], float(el.get("y", 0)) + at[1]
        transform = el.get("transform", "")
        moved = re.search(r"translate\(([-\d.]+)[ ,]+([-\d.]+)\)", transform)
        if moved:
            x, y = x + float(moved.group(1)), y + float(moved.group(2))
        turn = re.search(r"rotate\(([-\d.]+)(?:[ ,]+([-\d.]+)[ ,]+([-\d.]+))?\)", transform)
        rotation = None
        if turn:
            rotation = (float(turn.group(1)),) + ((float(turn.group(2)), float(turn.group(3))) if turn.group(2) else (x, y))
        out.append(((text, x, y, size, anchor.group(1) if anchor else "start",
                     family.group(1) if family else "DejaVu Sans"), groups, rotation))

    walk(ET.parse(path).getroot(), [], (0.0, 0.0))
    return out


def text_box(text, x, y, size, anchor, family):
    """The ink box of a text drawn at (x, y) (baseline, SVG's y down) with matplotlib's font metrics."""
    ext = TextPath((0, 0), text, size=size, prop=FontProperties(family=family)).get_extents()
    shift = {"start": 0.0, "middle": (ext.x0 + ext.x1) / 2, "end": ext.x1}[anchor]
    return x + ext.x0 - shift, y - ext.y1, x + ext.x1 - shift, y - ext.y0


def boxes_overlap(a, b, gap=0.0):
    """Whether two boxes overlap, or come closer than `gap` (texts that touch read as one)."""
    return a[0] < b[2] + gap and b[0] < a[2] + gap and a[1] < b[3] + gap and b[1] < a[3] + gap


def rotated(box, degrees, cx, cy):
    """`box` rotated about (cx, cy) by `degrees` as SVG's rotate() does (y down)."""
    a = math.radians(degrees)
    corners = [(box[0], box[1]), (box[2], box[1]), (box[0], box[3]), (box[2], box[3])]
    xs = [cx + (x - cx) * math.cos(a) - (y - cy) * math.sin(a) for x, y in corners]
    ys = [cy + (x - cx) * math.sin(a) + (y - cy) * math.cos(a) for x, y in corners]
    return min(xs), min(ys), max(xs), max(ys)


def svg_text_boxes(path):
    """Every <text> of an SVG as (text, ink box, ids of the groups holding it), rotations applied."""
    out = []
    for attrs, groups, rotation in svg_text_elements(path):
        box = text_box(*attrs)
        if rotation:
            box = rotated(box, *rotation)
        out.append((attrs[0], box, groups))
    return out


def check_figure_layout(out, svg_name, series_points=None):
    """One figure as a reviewer reads it: no two texts overlap (tick labels, axis labels, point
    labels, title, legend, caption), no text outside the legend lies over it, no tick is negative
    (every axis here counts or times something), a caption names benchmark, backbone and budget, and
    no series hides under another with the same points (`series_points`: name -> points, from the
    figure's data), which would leave two legend entries for one visible line."""
    texts = [t for t in svg_text_boxes(out / svg_name) if t[0].strip()]
    for (ta, a, ga), (tb, b, gb) in itertools.combinations(texts, 2):
        if ga == gb and ga and ga[-1].startswith("text"):  # the lines of one wrapped text
            continue
        ticks = all(any(g.startswith(("xtick", "ytick")) for g in groups) for groups in (ga, gb))
        # Tick labels closer than a third of their size read as one number ("100.0102.5").
        assert not boxes_overlap(a, b, gap=3.0 if ticks else 0.0), (svg_name, "texts overlap", ta, tb)
    legend = [t for t in texts if any(g.startswith("legend") for g in t[2])]
    if legend:
        size = max(b[3] - b[1] for _, b, _ in legend)
        box = (min(b[0] for _, b, _ in legend) - 2.5 * size, min(b[1] for _, b, _ in legend),
               max(b[2] for _, b, _ in legend), max(b[3] for _, b, _ in legend))
        for text, b, groups in texts:
            if not any(g.startswith("legend") for g in groups):
                assert not boxes_overlap(b, box), (svg_name, "text over the legend", text)
    for text, _, groups in texts:
        if any(g.startswith(("xtick", "ytick")) for g in groups):
            assert not text.startswith(("\u2212", "-")), (svg_name, "negative tick", text)
    captions = [t[0] for t in texts if "caption" in t[2]]
    assert len(captions) == 1 and all(f"{k}:" in captions[0] for k in ("benchmark", "backbone", "budget")), \
        (svg_name, "caption", captions)
    entries = {t[0] for t in legend}
    for a, b in itertools.combinations(sorted(series_points or {}), 2):
        if len(series_points[a]) > 1 and sorted(series_points[a]) == sorted(series_points[b]):
            assert not (a in entries and b in entries), (svg_name, "identical series, one hidden", a, b)


def figure_series(out):
    """figures.csv's series: figure -> series -> sorted points."""
    series = {}
    with open(out / "figures.csv", newline="") as f:
        for row in csv.DictReader(f):
            if row["series"]:
                series.setdefault(row["figure"], {}).setdefault(row["series"], []).append((row["x"], row["y"]))
    return series


def check_figures(out, labels, accuracy_figures=("accuracy_vs_memory", "accuracy_vs_inference")):
    """The accuracy figures in every format, each run's label in its SVG once, no two labels
    overlapping; every figure laid out as check_figure_layout says, its axes holding its points with
    a margin, an accuracy axis at least 5 points tall."""
    listing = json.loads((out / "figures.json").read_text())
    by_name = {f["name"]: f for f in listing["figures"]}
    for name in accuracy_figures:
        assert name in by_name, sorted(by_name)
        for ext in ("pdf", "svg", "png"):
            data = (out / f"{name}.{ext}").read_bytes()
            assert data[:4] in (b"%PDF", b"<?xm", b"\x89PNG"), (name, ext)
        placed = svg_texts(out / f"{name}.svg", "point-label")
        keyed = set(by_name[name]["keyed"])
        key_text = " ".join(t[0] for t in svg_texts(out / f"{name}.svg", "point-key"))
        for label in labels:
            if label in keyed:  # no free place: a number at the point, the label in the key under the axes
                assert label in key_text, (name, label, key_text)
            else:
                assert any(t[0] == label for t in placed), (name, label, [t[0] for t in placed])
        boxes = [(t[0], text_box(*t)) for t in placed]
        for i in range(len(boxes)):
            for j in range(i + 1, len(boxes)):
                assert not boxes_overlap(boxes[i][1], boxes[j][1]), (name, boxes[i], boxes[j])
    series = figure_series(out)
    for f in listing["figures"]:
        check_axes(f)
        check_figure_layout(out, f"{f['name']}.svg", series.get(f["name"]))
        if f["name"].startswith("accuracy_vs"):
            assert f["ylim"][1] - f["ylim"][0] >= 5, (f["name"], "accuracy axis", f["ylim"])
        for path in f["files"]:
            assert (pathlib.Path(path).stat().st_mode & 0o777) == (0o666 & ~current_umask()), (path, "mode")
    return by_name


def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def check_axes(figure):
    """Every point inside the axes, at least 5 % of the axis span from each edge (log axes: in log space)."""
    import math
    (x0, x1), (y0, y1) = figure["xlim"], figure["ylim"]
    log = figure["xscale"] == "log"
    fx = (lambda v: math.log10(v)) if log else (lambda v: v)
    for x, y in figure["points"]:
        for v, lo, hi, f in ((x, x0, x1, fx), (y, y0, y1, lambda v: v)):
            span = f(hi) - f(lo)
            assert f(lo) + 0.05 * span <= f(v) <= f(hi) - 0.05 * span, (figure["name"], (x, y), figure["xlim"], figure["ylim"])


def check_latex_compiles(out, tmp_path):
    """report.tex inside a minimal one-column article compiles with pdflatex (Debian's texlive,
    scripts/setup.sh), every table inside the column: no overfull box."""
    pdflatex = shutil.which("pdflatex")
    assert pdflatex, "pdflatex missing: scripts/setup.sh installs texlive-latex-base and texlive-latex-recommended"
    doc = tmp_path / "table.tex"
    doc.write_text("\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\usepackage{booktabs}\n\\usepackage{graphicx}\n"
                   f"\\begin{{document}}\n\\input{{{out / 'report.tex'}}}\n\\end{{document}}\n")
    r = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error", "-output-directory", tmp_path, doc],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout[-3000:]
    assert (tmp_path / "table.pdf").stat().st_size > 0
    log = (tmp_path / "table.log").read_text(errors="replace")
    assert "Overfull \\hbox" not in log, log[log.index("Overfull"):][:600]
