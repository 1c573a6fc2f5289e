"""`svqa run` with StreamKV (streamkv_segments + streamkv_layer_adaptive) on the tiny LLaVA-OV export
and a synthetic video: every record causal, the segment open at question time flushed and recorded,
memory accounted per layer (blocks spilled to disk too), and the reference code's protocol
(reencode_per_question) answering each question as a fresh stream ending at it would."""

import json
import subprocess

import pytest

TIMES = [9.0, 21.0, 47.0, 63.0]


class Setup:
    def __init__(self, dir, svqa):
        self.dir, self.svqa = dir, svqa


def write_run(setup, name, export, questions, protocol="streaming"):
    root = setup.dir
    (root / f"{name}.json").write_text(json.dumps({"streams": [{"id": "synthetic", "video": "video.avi",
                                                               "questions": questions}]}))
    (root / f"{name}.yaml").write_text(f"""
name: {name}
backbone: {{type: torchscript, options: {{export: {export}}}}}
encoding: {{type: streamkv_segments, options: {{n_local: 60, min_segment_size: 2, max_segment_size: 6,
            segment_theta: 0.999, keep_fraction: 0.5}}}}
retrieval: {{type: streamkv_layer_adaptive, options: {{retrieve_size: 4, local_size: 2}}}}
benchmark: {{type: stream_list, options: {{annotations: {root / (name + '.json')}}}}}
stream: {{frame_times: stride, fps: 0.5, chunk_frames: 4, max_new_tokens: 3, ram_budget_mb: 0, protocol: {protocol}}}
output: {{dir: {root / 'results'}}}
""")
    r = subprocess.run([setup.svqa, "run", root / f"{name}.yaml"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = (root / "results" / name / "predictions.jsonl").read_text().splitlines()
    return {rec["question_id"]: rec for rec in map(json.loads, lines)}


def question(t):
    return {"id": f"q{int(t)}", "time": t, "question": "What color is the background?",
            "options": ["red", "green", "blue"], "answer": "red"}


@pytest.fixture(scope="module")
def root(tmp_path_factory, svqa_bin):
    root = tmp_path_factory.mktemp("streamkv")
    subprocess.run([svqa_bin, "make-video", root / "video.avi", "--seconds", "70"], check=True, capture_output=True)
    return Setup(root, svqa_bin)


def test_streaming_records_are_causal_flush_the_open_segment_and_count_per_layer_memory(root, tiny_export):
    recs = write_run(root, "stream", tiny_export("llava_onevision"), [question(t) for t in TIMES])
    layers = 3
    previous_segments = 0
    for t in TIMES:
        rec = recs[f"q{int(t)}"]
        assert "error" not in rec, rec.get("error")
        assert rec["frames_encoded"] == int(t * 0.5)  # frames [0, int(t·fps))
        for layer in rec["retrieved"]:
            for block in layer:
                start, end = rec["block_spans"][str(block)]
                assert end <= t, f"block {block} ends at {end} s, after the question at {t} s"
        info = rec["extra"]["streamkv_segments"]
        flushed = info["flushed"]
        # The segment open when the question came was encoded then, up to the last frame before it.
        assert flushed is not None and flushed["last_frame"] == rec["frames_encoded"] - 1
        assert flushed["end_time"] <= t
        assert info["segments"] > previous_segments
        previous_segments = info["segments"]
        mem = rec["memory"]
        assert mem["disk_bytes"] > 0 and mem["ram_bytes"] == 0  # ram_budget_mb 0: every block spilled
        assert mem["by_granularity"]["summary"]["tokens"] == info["segments"] * 9  # one 9-token summary each
        assert mem["layer_tokens"] < mem["tokens"] * layers  # compression: frames kept in some layers only
        assert rec["extra"]["streamkv_layer_adaptive"]["allocation"]  # per-layer counts of the second pass


def test_reencode_per_question_answers_as_a_fresh_stream_ending_at_the_question(root, tiny_export):
    export = tiny_export("llava_onevision")
    again = write_run(root, "reencode", export, [question(t) for t in TIMES], protocol="reencode_per_question")
    for t in TIMES:
        rec = again[f"q{int(t)}"]
        assert rec["timing"]["encode_frames"] == rec["frames_encoded"] == int(t * 0.5)  # from frame 0 each time
        alone = write_run(root, f"alone{int(t)}", export, [question(t)])[f"q{int(t)}"]
        assert rec["prediction_ids"] == alone["prediction_ids"]
        assert rec["retrieved"] == alone["retrieved"]
        assert rec["memory"] == alone["memory"]
