"""`svqa run` with MuKV (mukv_multigrain + mukv_semi_hierarchical, the paper configuration) on the
tiny LLaVA-OV export with 196 tokens per frame: every record causal, the paper's budgets in the
records (767 stored tokens per 4 frames, 20·4 + 32·19 + 12·627 brought back), segment leftovers."""

import json
import subprocess

import pytest

TIMES = [9.0, 15.0, 97.0]  # 4, 7 and 48 frames at 0.5 fps: [0, int(t·fps))


@pytest.fixture(scope="module")
def setup(tmp_path_factory, svqa_bin, tiny_export):
    root = tmp_path_factory.mktemp("mukv")
    subprocess.run([svqa_bin, "make-video", root / "video.avi", "--seconds", "100"], check=True, capture_output=True)
    questions = [{"id": f"q{i}", "time": t, "question": "What color is the background?"} for i, t in enumerate(TIMES)]
    (root / "streams.json").write_text(json.dumps({"streams": [{"id": "s", "video": "video.avi", "questions": questions}]}))
    return root, tiny_export("llava_onevision_196")


def run(svqa_bin, root, export, leftovers):
    (root / f"{leftovers}.yaml").write_text(f"""
name: mukv_{leftovers}
backbone: {{type: torchscript, options: {{export: {export}}}}}
encoding: {{type: mukv_multigrain, options: {{segment_leftovers: {leftovers}}}}}
retrieval: {{type: mukv_semi_hierarchical}}
benchmark: {{type: stream_list, options: {{annotations: {root / 'streams.json'}}}}}
stream: {{frame_times: stride, fps: 0.5, chunk_frames: 6, max_new_tokens: 2}}
output: {{dir: {root / 'results'}}}
""")
    r = subprocess.run([svqa_bin, "run", root / f"{leftovers}.yaml"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = (root / "results" / f"mukv_{leftovers}" / "predictions.jsonl").read_text().splitlines()
    return {x["question_id"]: x for x in map(json.loads, lines)}


def test_budgets_causality_and_carried_leftovers_in_the_records(setup, svqa_bin):
    root, export = setup
    recs = run(svqa_bin, root, export, "carry")
    sinks = set()
    for i, t in enumerate(TIMES):
        rec = recs[f"q{i}"]
        frames = rec["frames_encoded"]
        assert frames == int(t * 0.5)
        for layer in rec["retrieved"]:
            assert layer == rec["retrieved"][0]  # the same blocks in every layer
            for block in layer:
                assert rec["block_spans"][str(block)][1] <= t, f"block {block} ends after the question at {t} s"
        by = rec["memory"]["by_granularity"]
        assert by["patch"]["tokens"] == 16 * frames and by["frame"]["tokens"] == 19 * frames
        assert by["segment"]["tokens"] == 627 * (frames // 4)  # 767 per 4 frames
        assert rec["extra"]["mukv_multigrain"] == {"segment_leftovers": "carry", "frames_awaiting_segment": frames % 4,
                                                   "frames_dropped_from_segments": 0}
        back = rec["extra"]["mukv_semi_hierarchical"]["tokens"]
        assert back == {"patch": 4 * min(20, 4 * frames), "frame": 19 * min(32, frames),
                        "segment": 627 * min(12, frames // 4)}
        assert len(set(rec["context_tokens"])) == 1
        sinks.add(rec["context_tokens"][0] - sum(back.values()))
    assert len(sinks) == 1 and sinks.pop() > 0  # context = sinks + what was brought back
    assert recs["q2"]["extra"]["mukv_semi_hierarchical"]["tokens"] == {"patch": 20 * 4, "frame": 32 * 19,
                                                                       "segment": 12 * 627}


def test_dropped_leftovers_leave_the_segment_view(setup, svqa_bin):
    root, export = setup
    recs = run(svqa_bin, root, export, "drop")
    # As the reference, segments restart at every encode chunk (stream.chunk_frames 6 here, the reference's 64)
    # and a chunk's frames short of a segment are dropped: q0 (frames 0-3, one chunk) drops none; q1
    # (frames 4-6) drops all three; q2 (frames 7-47: six chunks of 6, one of 5) keeps one segment per chunk
    # and drops 2 · 6 + 1 frames (carried across chunks instead, frames 7-46 would make 10 segments).
    expected = [(1, 0, 0), (1, 0, 3), (8, 0, 16)]
    for i, (segments, awaiting, dropped) in enumerate(expected):
        rec = recs[f"q{i}"]
        assert rec["memory"]["by_granularity"]["segment"]["tokens"] == 627 * segments
        assert rec["extra"]["mukv_multigrain"] == {"segment_leftovers": "drop", "frames_awaiting_segment": awaiting,
                                                   "frames_dropped_from_segments": dropped}


def test_mukv_experiment_files_validate(svqa_bin, root):
    files = sorted((root / "experiments" / "mukv").glob("*.yaml"))
    assert len(files) >= 11
    for f in files:
        grid = f.name.startswith("table")  # the paper's ablation tables are grids
        r = subprocess.run([svqa_bin, "grid", f, "--list"] if grid else [svqa_bin, "validate", f, "--no-paths"],
                           cwd=root, capture_output=True, text=True)
        assert r.returncode == 0, f"{f.name}: {r.stderr}"


def test_short_videos_are_skipped_with_a_record_that_says_so(tmp_path, svqa_bin, tiny_export):
    """As MuKV's reference driver (videos under 15 sampled frames are skipped), never silently: each
    question of a short stream is an error record naming the rule; a long enough stream is answered."""
    streams = []
    for name, seconds in (("short", 28), ("long", 32)):  # 14 and 16 frames at 0.5 fps
        subprocess.run([svqa_bin, "make-video", tmp_path / f"{name}.avi", "--seconds", str(seconds)], check=True,
                       capture_output=True)
        streams.append({"id": name, "video": f"{name}.avi", "questions": [{"id": "q", "time": 20.0, "question": "?"}]})
    (tmp_path / "streams.json").write_text(json.dumps({"streams": streams}))
    (tmp_path / "skip.yaml").write_text(f"""
name: skip
backbone: {{type: torchscript, options: {{export: {tiny_export("llava_onevision")}}}}}
encoding: {{type: mukv_multigrain}}
retrieval: {{type: mukv_semi_hierarchical}}
benchmark: {{type: stream_list, options: {{annotations: {tmp_path / 'streams.json'}}}}}
stream: {{frame_times: stride, fps: 0.5, max_new_tokens: 2, min_video_frames: 15}}
output: {{dir: {tmp_path / 'results'}}}
""")
    r = subprocess.run([svqa_bin, "run", tmp_path / "skip.yaml"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    recs = {x["stream"]: x for x in map(json.loads, (tmp_path / "results/skip/predictions.jsonl").read_text().splitlines())}
    assert recs["short"]["error"] == "skipped: the video has 14 frames at 0.5 fps, fewer than stream.min_video_frames (15)"
    assert "error" not in recs["long"] and recs["long"]["prediction_ids"]
    assert "1 questions errored" in r.stdout
