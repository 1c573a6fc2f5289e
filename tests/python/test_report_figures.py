"""`svqa report` on hand-made runs (no model runs: seconds): hostile labels (`$...$`, CJK, a display
name two runs share), hostile numbers (byte counts near int64's limit, a time that makes GB/h and fps
infinite), a warm-up outlier, equal accuracies, identical retrieval, MuKV-like blocks starting
together. The figures pass report_checks' checker, report.tex compiles in one column; and an
installed svqa (`cmake --install`) draws the figures with the source tree out of sight."""

import csv
import json
import math
import os
import re
import shutil
import subprocess

import pytest

from report_checks import check_figures, check_latex_compiles, svg_texts

INT64_MAX = 2**63 - 1


def record(qid, time, ttft=0.2, ram=1000, encode_s=1.0, scores=None):
    return {"stream": "s1", "question_id": qid, "time": time, "question": "?", "category": "",
            "options": ["red", "green"], "reference": "red", "prediction": "green", "prediction_ids": [1],
            "retrieved": [[0, 1]], "block_spans": {"0": [0, 2], "1": [2, 4]}, "context_tokens": [10, 10],
            "frames_encoded": 4,
            "timing": {"encode_s": encode_s, "encode_frames": 4, "retrieve_s": 0.1, "prefill_s": 0.1, "decode_s": 0.1,
                       "ttft_s": ttft, "load_1m": 0.5, "cpus": 2},
            "memory": {"blocks": 2, "tokens": 100, "ram_bytes": ram, "disk_bytes": ram, "representative_bytes": 0,
                       "layer_tokens": 200, "by_granularity": {}},
            "retrieval_scores": scores or [[0, 0.5], [2, 0.7]], "letter": "B", "correct": False}


def write_run(results, name, label, export, records):
    run = results / name
    run.mkdir(parents=True)
    (run / "config.yaml").write_text(f"""name: {name}
label: {json.dumps(label)}
backbone: {{type: torchscript, options: {{export: {export}}}}}
encoding: {{type: rekv_sliding_window, options: {{n_local: 60}}}}
retrieval: {{type: internal, options: {{retrieve_size: 4}}}}
benchmark: {{type: stream_list, options: {{annotations: {results.parent / 'streams.json'}}}}}
""")
    (run / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("report")
    (root / "streams.json").write_text(json.dumps({"streams": [{"id": "s1", "video": "s1.avi", "questions": [
        {"id": f"q{i}", "time": t, "question": "?", "options": ["red", "green"], "answer": "red"}
        for i, t in enumerate([10, 20, 30])]}]}))
    export = root / "tiny-llava_onevision"
    export.mkdir()
    results = root / "results"
    multigrain = [[0, 0.1], [0, 0.9], [0, 0.3], [10, 0.0], [10, 1.0], [20, 0.5]]  # patch, frame, segment blocks
    write_run(results, "dollars", "$k$=4 budget", export,
              [record("q0", 10, ttft=50.0), record("q1", 20, ram=INT64_MAX - 7, scores=multigrain),
               record("q2", 30, ram=INT64_MAX - 7, scores=multigrain)])
    write_run(results, "cjk", "中文方法", export,
              [record("q0", 10), record("q1", 1e-300, encode_s=1e-320), record("q2", 30, ttft=0.3)])
    for name in ("ablation_a", "ablation_b"):  # one display name, no settings: the report tells them apart
        write_run(results, name, "ReKV", export, [record("q0", 10), record("q1", 20, ttft=0.4), record("q2", 30)])
    return root


def report(svqa, results, out, env=None):
    r = subprocess.run([svqa, "report", results, "--out", out], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr + r.stdout
    return r


def test_report_of_hostile_labels_and_numbers_passes_the_figure_checker_and_fits_a_column(runs, svqa_bin, tmp_path):
    out = tmp_path / "out"
    r = report(svqa_bin, runs / "results", out)
    labels = ["$k$=4 budget", "中文方法", "ReKV (ablation_a)", "ReKV (ablation_b)"]
    for label in labels:
        assert f"| {label} |" in r.stdout, r.stdout
    with open(out / "report.csv", newline="") as f:
        rows = {row["label"]: row for row in csv.DictReader(f) if row["category"] == "overall"}
    # Byte counts near int64's limit: a positive GB/h (their int64 sum overflowed to -8e11).
    assert float(rows["$k$=4 budget"]["memory_gb_per_hour"]) > 0
    for row in rows.values():
        for column in ("memory_gb_per_hour", "encode_fps", "ttft_s", "memory_tokens"):
            assert row[column] == "" or math.isfinite(float(row[column])), (row["label"], column, row[column])
    for name in ("report.md", "report.csv", "figures.csv"):
        text = (out / name).read_text()
        assert not re.search(r"(?<![a-z])(inf|nan)(?![a-z])", text.lower()), name

    figures = check_figures(out, labels)
    placed = [t[0] for t in svg_texts(out / "accuracy_vs_memory.svg", "point-label")]
    assert "$k$=4 budget" in placed  # dollars kept, not mathtext
    # The TTFT figure leaves out the warm-up question, as the table does: its 50 s outlier is not drawn.
    assert max(y for _, y in figures["ttft_vs_stream_time"]["points"]) < 1
    for f in figures.values():
        assert "stream_list" in f["caption"] and "tiny-llava_onevision" in f["caption"], f["caption"]
        assert "retrieve_size=4" in f["caption"], f["caption"]
    # Runs that retrieve alike (the two ReKV runs, and the dollars run here): one line, named for all.
    assert sum("ReKV (ablation_a) = ReKV (ablation_b)" in name for name in figures["retrieval_temporal_bias"]["series"]) == 1
    check_latex_compiles(out, tmp_path)


def hidden_source_tree(root, command, side):
    """`command` in a mount namespace where the source tree is an empty folder but for its .venv
    (the Python and LibTorch the build used: outside dependencies, as docs/development.md says);
    None where user namespaces are not allowed."""
    if not shutil.which("unshare") or subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode:
        return None
    venv = root / ".venv"
    side.mkdir()
    script = (f"mount --bind '{venv.resolve()}' '{side}' && mount -t tmpfs none '{root}' && mkdir '{venv}' && "
              f"mount --bind '{side}' '{venv}' && exec " + " ".join(f"'{c}'" for c in command))
    return ["unshare", "-rm", "sh", "-c", script]


def test_installed_svqa_reports_with_its_own_script_and_python_without_the_source_tree(runs, svqa_bin, root, tmp_path):
    prefix = tmp_path / "prefix"
    r = subprocess.run(["cmake", "--install", svqa_bin.parent.parent, "--prefix", prefix], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr + r.stdout
    installed = prefix / "bin" / "svqa"
    assert (prefix / "share/svqa/figures.py").read_bytes() == (root / "app/report/figures.py").read_bytes()
    python = (prefix / "share/svqa/python").read_text().strip()
    assert os.access(python, os.X_OK), python
    env = {k: v for k, v in os.environ.items() if k != "SVQA_PYTHON"}
    out = tmp_path / "out"
    command = hidden_source_tree(root, [str(installed), "report", str(runs / "results"), "--out", str(out)],
                                 tmp_path / "venv")
    if command:
        r = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path)
        assert r.returncode == 0, r.stderr + r.stdout
    else:  # no user namespaces here: the source tree stays visible, what draws is still checked below
        report(installed, runs / "results", out, env=env)
    listing = json.loads((out / "figures.json").read_text())
    assert listing["script"] == str((prefix / "share/svqa/figures.py").resolve())
    assert len(listing["figures"]) >= 4 and all(os.path.exists(p) for f in listing["figures"] for p in f["files"])
