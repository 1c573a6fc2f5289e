"""Checks of what `svqa report` writes, shared by the tests that run one: the figures (every format,
every run's label present in the SVG, no two labels' boxes overlapping, axes holding every point with
a margin) and the LaTeX table (compiled with pdflatex)."""

import json
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
    out = []
    groups = [g for g in ET.parse(path).getroot().iter(SVG + "g") if g.get("id", "").startswith(group_prefix)]
    for el in {id(t): t for g in groups for t in g.iter(SVG + "text")}.values():
        style = el.get("style", "")
        size = float(re.search(r"font-size:\s*([\d.]+)px", style).group(1))
        family = re.search(r"font-family:\s*'([^']+)'", style)
        anchor = re.search(r"text-anchor:\s*(\w+)", style)
        out.append(("".join(el.itertext()), float(el.get("x", 0)), float(el.get("y", 0)), size,
                    anchor.group(1) if anchor else "start", family.group(1) if family else "DejaVu Sans"))
    return out


def text_box(text, x, y, size, anchor, family):
    """The ink box of a text drawn at (x, y) (baseline, SVG's y down) with matplotlib's font metrics."""
    ext = TextPath((0, 0), text, size=size, prop=FontProperties(family=family)).get_extents()
    shift = {"start": 0.0, "middle": (ext.x0 + ext.x1) / 2, "end": ext.x1}[anchor]
    return x + ext.x0 - shift, y - ext.y1, x + ext.x1 - shift, y - ext.y0


def boxes_overlap(a, b):
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def check_figures(out, labels, accuracy_figures=("accuracy_vs_memory", "accuracy_vs_inference")):
    """The accuracy figures in every format, each run's label in its SVG once, no two labels
    overlapping; every figure's axes hold its points with a margin."""
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
    for f in listing["figures"]:
        check_axes(f)
    return by_name


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
    """report.tex inside a minimal document compiles with pdflatex (Debian's texlive, scripts/setup.sh)."""
    pdflatex = shutil.which("pdflatex")
    assert pdflatex, "pdflatex missing: scripts/setup.sh installs texlive-latex-base and texlive-latex-recommended"
    doc = tmp_path / "table.tex"
    doc.write_text("\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\usepackage{booktabs}\n"
                   f"\\begin{{document}}\n\\input{{{out / 'report.tex'}}}\n\\end{{document}}\n")
    r = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error", "-output-directory", tmp_path, doc],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout[-3000:]
    assert (tmp_path / "table.pdf").stat().st_size > 0
