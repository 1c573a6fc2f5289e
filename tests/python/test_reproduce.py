"""experiments/reproduce/ (docs/reproducing.md): every file validates (its exports and data are not in the
repository: --no-paths) with a sourced `expected:` that the doc lists; `svqa report` puts the paper's
figure and Δ beside ours on tiny runs given `expected:` values."""

import json
import re
import subprocess

import numpy as np
import yaml
from experiment_files import write_experiment


def test_every_reproduce_experiment_validates_and_is_listed_with_its_source(svqa_bin, root):
    files = sorted((root / "experiments" / "reproduce").glob("*.yaml"))
    assert len(files) >= 25
    doc = (root / "docs" / "reproducing.md").read_text()
    for f in files:
        r = subprocess.run([svqa_bin, "validate", f, "--no-paths", "--dump"], cwd=root, capture_output=True, text=True)
        assert r.returncode == 0, f"{f.name}: {r.stderr}"
        resolved = yaml.safe_load(r.stdout)
        expected = resolved["expected"]
        assert resolved["name"] == f.stem and resolved["output"]["dir"] == "results/reproduce"
        assert re.fullmatch(r"\d{4}\.\d{4,5}", expected["arxiv"]) and "Table" in expected["source"]
        row = next((line for line in doc.splitlines() if line.startswith(f"| `{f.name}` |")), None)
        assert row is not None, f"{f.name}: not in docs/reproducing.md"
        assert f"| {expected['value']} | `{expected['metric']}` |" in row and expected["source"] in row, row


def test_report_puts_the_paper_figure_and_delta_beside_ours(svqa_bin, tmp_path, tiny_export):
    np.save(tmp_path / "clip.npy", np.random.default_rng(0).integers(0, 256, (6, 48, 48, 3), dtype=np.uint8))
    colors = ["red", "green", "blue"]
    (tmp_path / "streams.json").write_text(json.dumps({"streams": [{"id": "clip", "video": "clip.npy", "questions": [
        {"id": f"q{i}", "time": 1.0 + i, "question": "Which color?", "options": colors, "answer": colors[i],
         "category": "color"} for i in range(3)]}]}))
    export = tiny_export("llava_onevision")
    far = write_experiment(tmp_path / "far.yaml", "far", export, tmp_path / "streams.json")
    far.write_text(far.read_text() + 'label: Far\nexpected: {value: 150, source: "Paper A, Table 1", arxiv: "2503.00540"}\n')
    near = write_experiment(tmp_path / "near.yaml", "near", export, tmp_path / "streams.json")
    near.write_text(near.read_text() + 'label: Near\nexpected: {value: 0, metric: "category:color", tolerance: 100, '
                                       'source: "Paper B, Table 2", arxiv: "2602.18434", note: "another judge"}\n')
    plain = write_experiment(tmp_path / "plain.yaml", "plain", export, tmp_path / "streams.json")
    plain.write_text(plain.read_text() + "label: Plain\n")
    for exp in (far, near, plain):
        r = subprocess.run([svqa_bin, "run", exp, "--out", tmp_path / "results"], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    r = subprocess.run([svqa_bin, "report", tmp_path / "results", "--no-figures"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    header = next(line for line in r.stdout.splitlines() if line.startswith("| method |"))
    assert "| accuracy % | paper | Δ |" in header
    cells = {line.split(" | ")[0][2:]: [c.strip() for c in line.split("|")[1:-1]]
             for line in r.stdout.splitlines() if line.startswith(("| Far ", "| Near ", "| Plain "))}
    at = [c.strip() for c in header.split("|")[1:-1]]
    accuracy, paper, delta, color = (at.index(k) for k in ("accuracy %", "paper", "Δ", "color %"))
    far_cells, near_cells, plain_cells = cells["Far"], cells["Near"], cells["Plain"]
    assert far_cells[paper] == "150.0 (accuracy)"
    assert far_cells[delta] == f"{float(far_cells[accuracy]) - 150:+.1f} !"  # |Δ| >= 50 > the default tolerance 1
    assert near_cells[paper] == "0.0 (category:color)"
    assert near_cells[delta] == f"{float(near_cells[color]):+.1f}"  # within its tolerance 100: no mark
    assert plain_cells[paper] == "" and plain_cells[delta] == ""
    assert ("Sources: Far: Paper A, Table 1 (arXiv 2503.00540); Near: Paper B, Table 2 (arXiv 2602.18434; another "
            "judge).") in r.stdout
