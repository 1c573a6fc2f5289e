"""experiments/compare_methods.yaml end to end on tiny exports (Qwen2.5-VL, PE-Core) and two short
synthetic streams: every method of the file runs, every retrieval is causal, and `svqa report` gives
one row per method with accuracy, memory tokens, inference tokens, encode fps and TTFT, plus the
accuracy-vs-tokens plots. The file itself is used, with its paths and sizes scaled to the tiny models."""

import csv
import json
import pathlib
import subprocess
import sys

import pytest
import yaml

from report_checks import check_figures, check_latex_compiles

TIMES = {"s1": [11.0, 29.0], "s2": [17.0, 39.0]}


def point_to_tiny(node, pe_core):
    """Every external expert of the file at the tiny PE-Core, on the CPU, and budgets of 4 blocks (or frames)."""
    if isinstance(node, dict):
        if node.get("type") == "rrf_mixture":
            node["options"].update(model=str(pe_core), device="")
        if node.get("type") == "fresh_frames":  # 4 frames fed at each question, both samplings
            node.setdefault("options", {})["frames"] = 4
        if node.get("type") == "hermes":  # a budget the tiny streams pass: compactions run
            node["options"]["budget"] = 60
        if "retrieve_size" in node:
            node["retrieve_size"] = 4
        if "local_size" in node:
            node["local_size"] = 2
        if isinstance(node.get("blocks"), dict):  # MuKV's k per granularity
            node["blocks"] = {g: 2 for g in node["blocks"]}
        if "n_local" in node:
            node["n_local"] = 120
        for value in node.values():
            point_to_tiny(value, pe_core)
    elif isinstance(node, list):
        for value in node:
            point_to_tiny(value, pe_core)


def scaled_presets(root, out, pe_core):
    """experiments/methods/ copied to `out`, every preset scaled to the tiny exports."""
    out.mkdir()
    for preset in (root / "experiments/methods").glob("*.yaml"):
        node = yaml.safe_load(preset.read_text())
        point_to_tiny(node, pe_core)
        (out / preset.name).write_text(yaml.safe_dump(node))
    return out


def method_of(presets, name):
    """'encoding + retrieval' of a preset, following its _base_ chain, as the report's method column says."""
    node = yaml.safe_load((presets / name).read_text())
    types = method_of(presets, node["_base_"]) if "_base_" in node else {}
    for section in ("encoding", "retrieval"):
        if section in node:
            types[section] = node[section]["type"]
    return types


def test_compare_methods_runs_every_method_and_reports_one_row_each(tmp_path, root, svqa_bin, tiny_export):
    """...and the report shows display names in the grid's order, in tables (the LaTeX one compiles)
    and in figures whose labels are all there and never overlap."""
    pe_core = tmp_path / "pe_core"
    r = subprocess.run([sys.executable, "-m", "models.export.image_text", "--tiny", "pe_core", "--out", pe_core],
                       cwd=root, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    streams = []
    for name, times in TIMES.items():
        subprocess.run([svqa_bin, "make-video", tmp_path / f"{name}.avi", "--seconds", "44"], check=True,
                       capture_output=True)
        streams.append({"id": name, "video": f"{name}.avi", "questions": [
            {"id": f"q{i}", "time": t, "question": "What color is the background?", "options": ["red", "green"],
             "answer": "red"} for i, t in enumerate(times)]})
    (tmp_path / "streams.json").write_text(json.dumps({"streams": streams}))

    # The file itself, its presets scaled beside it (the grid names them relative to the file).
    presets = scaled_presets(root, tmp_path / "methods", pe_core)
    config = yaml.safe_load((root / "experiments/compare_methods.yaml").read_text())
    point_to_tiny(config, pe_core)
    config.update(runtime={"device": "cpu", "dtype": "float32", "threads": 2, "seed": 0},
                  backbone={"type": "torchscript", "options": {"export": str(tiny_export("llava_onevision")),
                                                                   "video_resize": {"_delete_": True}}},
                  benchmark={"type": "stream_list", "options": {"annotations": str(tmp_path / "streams.json")}},
                  output={"dir": str(tmp_path / "results")})
    config["stream"]["max_new_tokens"] = 2
    (tmp_path / "compare_methods.yaml").write_text(yaml.safe_dump(config))
    chosen = config["grid"]["axes"]["_base_"]
    assert len(chosen) >= 9 - 2  # ReKV, Mem-Stream, StreamKV, MuKV, full context and the two baselines
    types = [method_of(presets, pathlib.Path(p).name) for p in chosen]
    methods = [f"{t['encoding']} + {t['retrieval']}" for t in types]
    assert {"rekv_sliding_window + internal", "memstream_aks + rrf_mixture", "streamkv_segments + streamkv_layer_adaptive",
            "mukv_multigrain + mukv_semi_hierarchical"} <= set(methods)
    assert methods.count("fresh_frames + full_context") == 2  # uniform sampling and recent frames

    r = subprocess.run([svqa_bin, "grid", tmp_path / "compare_methods.yaml"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr + r.stdout
    for predictions in (tmp_path / "results").rglob("predictions.jsonl"):
        for line in predictions.read_text().splitlines():
            rec = json.loads(line)
            assert "error" not in rec, rec["error"]
            for layer in rec["retrieved"]:
                for block in layer:
                    assert rec["block_spans"][str(block)][1] <= rec["time"], f"{predictions}: retrieval after the question"

    out = tmp_path / "report"
    r = subprocess.run([svqa_bin, "report", tmp_path / "results", "--out", out], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr + r.stdout
    with open(out / "report.csv", newline="") as f:
        rows = [row for row in csv.DictReader(f) if row["category"] == "overall"]
    assert sorted(row["method"] for row in rows) == sorted(methods)  # one row per method
    for row in rows:
        for column in ("accuracy", "memory_tokens", "inference_tokens", "encode_fps", "ttft_s"):
            assert row[column] != "", (row["method"], column)
    # Memory tokens are per layer: StreamKV's compressed frames count only in the layers that keep them.
    streamkv = [json.loads(line) for p in (tmp_path / "results").glob("compare_methods/*streamkv*/predictions.jsonl")
                for line in p.read_text().splitlines()]
    held = [r["memory"]["layer_tokens"] / len(r["context_tokens"]) for r in streamkv]
    row = next(row for row in rows if row["method"].startswith("streamkv_segments"))
    assert float(row["memory_tokens"]) == pytest.approx(sum(held) / len(held), abs=0.05)
    assert any(h < r["memory"]["tokens"] for h, r in zip(held, streamkv))  # some frames were dropped in some layers
    markdown = (out / "report.md").read_text()
    assert "| memory tokens | inference tokens | memory GB/h | encode fps | TTFT s |" in markdown
    # Display names, not registry ids: each preset's `label`, rows in the grid's order.
    labels = [yaml.safe_load((presets / pathlib.Path(p).name).read_text())["label"] for p in chosen]
    assert sorted(row["label"] for row in rows) == sorted(labels)
    rows_at = [markdown.index(f"| {label} |") for label in labels]
    assert rows_at == sorted(rows_at)
    # Both baselines are rows of their own: the N frames fed at each question are their memory.
    for name, sampling in (("fresh_uniform", "uniform"), ("fresh_recent", "recent")):
        recs = [json.loads(line) for p in (tmp_path / "results").glob(f"compare_methods/*__{name}-*/predictions.jsonl")
                for line in p.read_text().splitlines()]
        assert len(recs) == 4, name
        for rec in recs:
            assert rec["extra"]["fresh_frames"]["sampling"] == sampling
            assert rec["memory"]["blocks"] == len(rec["extra"]["fresh_frames"]["frames_fed"]) == 4
    assert sum(row["run"].endswith(("__fresh_uniform", "__fresh_recent")) for row in rows) == 2
    check_figures(out, labels)
    check_latex_compiles(out, tmp_path)
    # The expert scores of Mem-Stream's mixture and the windows' sizes are in its records.
    mixture = next((tmp_path / "results").glob("compare_methods/*__memstream-*/predictions.jsonl"))
    rec = json.loads(mixture.read_text().splitlines()[-1])
    experts = rec["extra"]["expert_scores"]
    assert len(experts["internal"]) == len(rec["retrieval_scores"]) == rec["memory"]["blocks"]
    assert len(experts["external"]) == rec["memory"]["blocks"]
    rekv = next((tmp_path / "results").glob("compare_methods/*__rekv-*/predictions.jsonl"))
    dense = json.loads(rekv.read_text().splitlines()[-1])["extra"]["rekv_sliding_window"]["window_tokens"]
    assert 0 < rec["extra"]["memstream_aks"]["window_tokens"] < dense  # AKS thins the window ReKV keeps whole
