"""`svqa run` end to end on the tiny LLaVA-OV export and a synthetic video: causality of every
retrieval, per-question records, errors that do not stop the run, and resuming."""

import json
import subprocess

import pytest

TIMES = [9.0, 21.0, 47.0, 63.0, 88.0, 115.0]


@pytest.fixture(scope="module")
def setup(tmp_path_factory, svqa_bin, tiny_export):
    root = tmp_path_factory.mktemp("stream")
    export = tiny_export("llava_onevision")
    subprocess.run([svqa_bin, "make-video", root / "video.avi", "--seconds", "130"], check=True, capture_output=True)
    questions = [{"id": f"q{i}", "time": t, "question": "What color is the background?",
                  "options": ["red", "green", "blue"], "answer": "red"} for i, t in enumerate(TIMES)]
    questions.append({"id": "late", "time": 500.0, "question": "What happened?"})
    # (A missing video is a fault asked again by the next run: test_benchmark_cli.py's offline cgbench test.)
    streams = {"streams": [{"id": "synthetic", "video": "video.avi", "questions": questions}]}
    (root / "streams.json").write_text(json.dumps(streams))
    (root / "exp.yaml").write_text(f"""
name: stream_test
backbone: {{type: torchscript, options: {{export: {export}}}}}
encoding: {{type: rekv_sliding_window, options: {{n_local: 60}}}}
retrieval: {{type: internal, options: {{retrieve_size: 4}}}}
benchmark: {{type: stream_list, options: {{annotations: {root / 'streams.json'}}}}}
stream: {{frame_times: stride, fps: 0.5, chunk_frames: 8, max_new_tokens: 4, ram_budget_mb: 0}}
output: {{dir: {root / 'results'}}}
""")
    return root


def run(svqa_bin, root):
    return subprocess.run([svqa_bin, "run", root / "exp.yaml"], capture_output=True, text=True)


def records(root):
    lines = (root / "results" / "stream_test" / "predictions.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_every_question_answered_causally_and_errors_recorded(setup, svqa_bin):
    r = run(svqa_bin, setup)
    assert r.returncode == 0, r.stderr
    assert "RANDOM weights" in r.stdout
    recs = {x["question_id"]: x for x in records(setup)}
    assert sorted(recs) == sorted([f"q{i}" for i in range(len(TIMES))] + ["late"])
    assert "after the end of the stream" in recs["late"]["error"] and "fault" not in recs["late"]  # final
    last_tokens = last_frames = 0
    for i, t in enumerate(TIMES):
        rec = recs[f"q{i}"]
        assert rec["time"] == t
        assert rec["frames_encoded"] == int(t * 0.5)  # frames [0, int(t·fps)): at 0, 2, 4, ... s before t
        assert len(rec["retrieved"]) == 3  # one selection per layer
        for layer in rec["retrieved"]:
            assert 0 < len(layer) <= 4
            for block in layer:
                start, end = rec["block_spans"][str(block)]
                assert end <= t, f"{rec['question_id']}: block {block} ends at {end} s, after the question at {t} s"
        assert rec["memory"]["tokens"] > last_tokens  # memory grows with the stream
        last_tokens = rec["memory"]["tokens"]
        assert rec["memory"]["disk_bytes"] > 0  # ram_budget_mb 0: every block spills
        timing = rec["timing"]
        assert set(timing) == {"encode_s", "encode_frames", "retrieve_s", "prefill_s", "decode_s", "ttft_s", "load_1m", "cpus"}
        assert timing["ttft_s"] == pytest.approx(timing["retrieve_s"] + timing["prefill_s"])
        assert timing["encode_frames"] == rec["frames_encoded"] - last_frames  # encoded since the previous question
        last_frames = rec["frames_encoded"]
        assert [s for s, _ in rec["retrieval_scores"]] == sorted(s for s, _ in rec["retrieval_scores"])
        assert len(rec["retrieval_scores"]) == rec["memory"]["blocks"]  # every block in memory is scored
    metrics = json.loads((setup / "results" / "stream_test" / "metrics.json").read_text())
    assert metrics["answered"] == len(TIMES) and metrics["errored"] == 1 and metrics["scored"] == len(TIMES)


def test_rerun_resumes_and_a_torn_line_is_redone(setup, svqa_bin):
    path = setup / "results" / "stream_test" / "predictions.jsonl"
    before = records(setup)
    r = run(svqa_bin, setup)
    assert r.returncode == 0 and "7 already answered" in r.stdout
    assert records(setup) == before
    # A kill in the middle of writing leaves a torn last line: it is dropped and that question redone.
    lines = path.read_text().splitlines(keepends=True)
    kept = [line for line in lines if json.loads(line)["question_id"] != "q3"]
    path.write_text("".join(kept) + json.dumps(before[0])[:40])
    r = run(svqa_bin, setup)
    assert r.returncode == 0, r.stderr
    after = records(setup)
    assert sorted(x["question_id"] for x in after) == sorted(x["question_id"] for x in before)
    redone = next(x for x in after if x["question_id"] == "q3")
    original = next(x for x in before if x["question_id"] == "q3")
    assert redone["prediction_ids"] == original["prediction_ids"]  # deterministic
    assert redone["retrieved"] == original["retrieved"]


def run_movie(tmp_path, svqa_bin, export, end_time, stream):
    """A 20-frame 1-fps RVS-Movie .npy asked one question at `end_time`, full-context retrieval; its record."""
    import numpy as np

    np.save(tmp_path / "tt01.npy", np.random.default_rng(0).integers(0, 256, (20, 48, 48, 3), dtype=np.uint8))
    movie = [{"video_id": "tt01", "video_path": "/data/rvs/movie/videos/tt01.npy", "duration": 20,
              "clip_start_time": 0, "clip_end_time": 20,
              "conversations": [{"question": "What happens?", "answer": "x", "start_time": 0, "end_time": end_time}]}]
    (tmp_path / "movienet_oe.json").write_text(json.dumps(movie))
    (tmp_path / "exp.yaml").write_text(f"""
name: movie
backbone: {{type: torchscript, options: {{export: {export}}}}}
encoding: {{type: rekv_sliding_window}}
retrieval: {{type: full_context}}
benchmark: {{type: rvs_movie, options: {{annotations: {tmp_path / 'movienet_oe.json'}}}}}
stream: {stream}
output: {{dir: {tmp_path / 'results'}}}
""")
    r = subprocess.run([svqa_bin, "run", tmp_path / "exp.yaml"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads((tmp_path / "results" / "movie" / "predictions.jsonl").read_text().splitlines()[0])


def test_rvs_movie_npy_frames_are_sampled_from_1_fps_as_rekv_does(tmp_path, svqa_bin, tiny_export):
    rec = run_movie(tmp_path, svqa_bin, tiny_export("llava_onevision"), 9, "{frame_times: stride, fps: 0.5, max_new_tokens: 2}")
    # linspace(0, 19, 10) → frames 0, 2, 4, 6, 8, 10, ... at 1 fps; the first int(9 · 0.5) = 4 of them.
    assert rec["frames_encoded"] == 4
    assert sorted(s for s, _ in rec["block_spans"].values()) == [0, 2, 4, 6]


@pytest.mark.parametrize("rule, time, seen", [
    ("exclusive", 10, list(range(10))),     # ReKV: video[0:int(10 · 1)]
    ("inclusive", 10, list(range(11))),     # every frame stamped at or before 10 s
    ("exclusive", 10.5, list(range(10))),
    ("inclusive", 10.5, list(range(11))),
    (None, 10, list(range(10))),            # exclusive by default
])
def test_frames_before_a_question(tmp_path, svqa_bin, tiny_export, rule, time, seen):
    rule_line = f"frames_before_question: {rule}, " if rule else ""
    rec = run_movie(tmp_path, svqa_bin, tiny_export("llava_onevision"), time, f"{{{rule_line}frame_times: stride, fps: 1, max_new_tokens: 1}}")
    assert rec["frames_encoded"] == len(seen)
    assert sorted(s for s, _ in rec["block_spans"].values()) == seen


def test_a_zero_height_npy_stream_is_a_fault_of_that_stream_only(tmp_path, svqa_bin, tiny_export, root):
    import numpy as np

    np.save(tmp_path / "good.npy", np.random.default_rng(0).integers(0, 256, (4, 48, 48, 3), dtype=np.uint8))
    zero = root / "tests" / "fixtures" / "npy" / "zero_height.npy"  # the audit's input: aborted the whole run
    question = {"time": 1.0, "question": "What happens?", "options": ["a", "b"], "answer": "a"}
    streams = {"streams": [{"id": "zero", "video": str(zero), "questions": [{"id": "z1", **question}]},
                           {"id": "good", "video": "good.npy", "questions": [{"id": "g1", **question}]}]}
    (tmp_path / "streams.json").write_text(json.dumps(streams))
    from experiment_files import write_experiment

    write_experiment(tmp_path / "exp.yaml", "zero", tiny_export("llava_onevision"), tmp_path / "streams.json")
    r = subprocess.run([svqa_bin, "run", tmp_path / "exp.yaml", "--out", tmp_path / "results"], capture_output=True,
                       text=True)
    # The input file's fault, not an answer: recorded, the other stream answered, the run left open (exit 1).
    assert r.returncode == 1 and "rerun to ask them again" in r.stderr, r.stderr
    lines = (tmp_path / "results" / "zero" / "predictions.jsonl").read_text().splitlines()
    recs = {x["question_id"]: x for x in map(json.loads, lines)}
    assert recs["z1"]["error"] == f"{zero}: expected uint8 frames [N, H, W, 3] (RGB, N, H, W >= 1), got uint8 [2, 0, 8, 3]"
    assert recs["z1"]["fault"] == "input"
    assert "prediction" in recs["g1"]
