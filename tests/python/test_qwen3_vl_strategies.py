"""Every encoding strategy (and the retrieval strategies that need no second model) under `svqa run`
on a tiny Qwen3-VL export: records causal, blocks carrying their timestamp text; ReKV with every
block retrieved answers as the full-context decoder does."""

import json
import subprocess
import sys

import pytest

from experiment_files import write_experiment

TIMES = [5.0, 11.0, 19.0]
STREAM = "{fps: 1, chunk_frames: 4, max_new_tokens: 6}"
# encoding, retrieval
RUNS = {
    "rekv": ("{type: rekv_sliding_window, options: {n_local: 40}}", "{type: internal, options: {retrieve_size: 3}}"),
    "rekv_recent": ("{type: rekv_sliding_window, options: {n_local: 40}}", "{type: bank_recent, options: {retrieve_size: 2}}"),
    "rekv_uniform": ("{type: rekv_sliding_window, options: {n_local: 40}}", "{type: bank_uniform, options: {retrieve_size: 2}}"),
    "memstream_aks": ("{type: memstream_aks, options: {n_local: 40}}", "{type: internal, options: {retrieve_size: 3}}"),
    "mukv": ("{type: mukv_multigrain, options: {segment_frames: 4}}", "{type: mukv_semi_hierarchical}"),
    "mukv_quadrants": ("{type: mukv_multigrain, options: {segment_frames: 4, patch_layout: quadrants}}",
                       "{type: mukv_semi_hierarchical}"),
    "streamkv": ("{type: streamkv_segments, options: {n_local: 200, min_segment_size: 2, max_segment_size: 3, "
                 "keep_fraction: 0.5}}", "{type: streamkv_layer_adaptive}"),
}


@pytest.fixture(scope="module")
def stream(tmp_path_factory, root, svqa_bin):
    tmp = tmp_path_factory.mktemp("qwen3_strategies")
    r = subprocess.run([sys.executable, "-m", "models.export", "--tiny", "qwen3_vl", "--out", str(tmp / "export")],
                       cwd=root, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    subprocess.run([svqa_bin, "make-video", tmp / "video.avi", "--seconds", "24"], check=True, capture_output=True)
    questions = [{"id": f"q{i}", "time": t, "question": "What color is the background?",
                  "options": ["red", "green", "blue"], "answer": "red"} for i, t in enumerate(TIMES)]
    (tmp / "streams.json").write_text(json.dumps({"streams": [{"id": "s", "video": "video.avi", "questions": questions}]}))
    return tmp


def run(svqa_bin, tmp, name, encoding, retrieval):
    exp = write_experiment(tmp / f"{name}.yaml", name, tmp / "export", tmp / "streams.json", encoding=encoding,
                           retrieval=retrieval, stream=STREAM)
    r = subprocess.run([svqa_bin, "run", exp, "--out", tmp / "results"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = (tmp / "results" / name / "predictions.jsonl").read_text().splitlines()
    return {rec["question_id"]: rec for rec in map(json.loads, lines)}


@pytest.mark.parametrize("name", RUNS)
def test_strategy_runs_causally_on_qwen3_vl(stream, svqa_bin, name):
    recs = run(svqa_bin, stream, name, *RUNS[name])
    assert sorted(recs) == [f"q{i}" for i in range(len(TIMES))]
    for i, t in enumerate(TIMES):
        rec = recs[f"q{i}"]
        assert "error" not in rec, rec.get("error")
        assert rec["prediction_ids"], rec
        for layer in rec["retrieved"]:
            for block in layer:
                start, end = rec["block_spans"][str(block)]
                assert end <= t, f"{name} {rec['question_id']}: block {block} ends at {end} s, after {t} s"


def test_rekv_with_every_block_retrieved_answers_as_full_context(stream, svqa_bin):
    """A window wider than the stream and retrieve_size ≥ blocks: the context is every block in
    order, so the answers (prediction ids) equal the full-context decoder's."""
    encoding = "{type: rekv_sliding_window, options: {n_local: 100000}}"
    rekv = run(svqa_bin, stream, "rekv_all", encoding, "{type: internal, options: {retrieve_size: 64}}")
    full = run(svqa_bin, stream, "full", encoding, "{type: full_context}")
    for qid in rekv:
        assert rekv[qid]["prediction_ids"] == full[qid]["prediction_ids"], qid
        assert all(len(layer) == rekv[qid]["memory"]["blocks"] for layer in rekv[qid]["retrieved"])
