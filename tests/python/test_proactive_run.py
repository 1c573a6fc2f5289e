"""Tiny end-to-end runs (a tiny random LLaVA-OneVision export, a synthetic stream) of StreamingBench's
Proactive polling and of the context window (stream.context_window_s). Proactive: the dialog every
record holds equals what the official loop (src/benchmark/StreamingBenchProactive.py, transcribed)
records when fed the same answers: the same polls at the same times, stopping at the same turn; every
poll is causal (no retrieved block ends after its time) and has its own time to first token; the
stream is encoded once although polls of two questions interleave; the exported results file scored
by count.py (transcribed) gives svqa's own score. Window: no retrieved block (no fed frame for
fresh_frames) starts before t - w, on every poll."""

import copy
import json
import subprocess

import pytest

from streamingbench_reference import count_proactive, proactive_eval


def svqa(svqa_bin, root, *args):
    r = subprocess.run([str(svqa_bin), *map(str, args)], cwd=root, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def question(text, stamp, gt_stamp, output):
    return {"task_type": "Proactive Output", "question": text, "time_stamp": stamp, "ground_truth_time_stamp": gt_stamp,
            "ground_truth_output": output, "required_ability": "working memory"}


# Two questions whose polls interleave (3..12 s and 6..13 s), one later (21..29 s).
DATA = [
    {"time": "[0:00:00 - 0:00:15]", "video_categories": "x", "video_path": "./clip.avi",
     "questions": [question("When the red box appears, output \"red\".", "00:00:02", "00:00:08", "red"),
                   question("When the screen turns blue, output \"2\".", "00:00:05", "00:00:09", "2")]},
    {"time": "[0:00:15 - 0:00:30]", "video_categories": "x", "video_path": "./clip.avi",
     "questions": [question("When it ends, output \"end\".", "00:00:20", "00:00:25", "end")]},
]


@pytest.fixture
def clip(svqa_bin, root, tmp_path):
    svqa(svqa_bin, root, "make-video", tmp_path / "clip.avi", "--seconds", "40", "--fps", "2")
    (tmp_path / "pro.json").write_text(json.dumps(DATA))
    return tmp_path / "clip.avi"


def run(svqa_bin, root, tmp_path, export, name, encoding, retrieval, window=0, extra=""):
    (tmp_path / f"{name}.yaml").write_text(f"""
name: {name}
backbone: {{type: torchscript, options: {{export: {export}}}}}
encoding: {encoding}
retrieval: {retrieval}
benchmark: {{type: streamingbench_proactive, options: {{annotations: {tmp_path / 'pro.json'}}}}}
stream: {{frame_times: stride, fps: 0.5, max_new_tokens: 3, context_window_s: {window}}}
{extra}""")
    svqa(svqa_bin, root, "run", tmp_path / f"{name}.yaml", "--out", tmp_path / "results")
    folder = tmp_path / "results" / name
    records = [json.loads(line) for line in (folder / "predictions.jsonl").read_text().splitlines()]
    assert len(records) == 3 and all("error" not in r for r in records), records
    return folder, {r["question_id"]: r for r in records}


def model_turns(records):
    """Each poll and question of svqa's records: (question text, time, was it the poll) -> answer."""
    said = {}
    for r in records.values():
        turns = r["extra"]["dialog_history"]
        for user, model in zip(turns[0::2], turns[1::2]):
            said[(r["question"], user["time"], user["content"] != r["question"])] = model["content"]
    return said


def replay_official(records):
    """The official loop over DATA with svqa's answers as the model's."""
    said = model_turns(records)

    def respond(q, clip_start, clip_end, inp):
        return said[(q["question"], clip_end, "Is it the right time" in inp)]

    return proactive_eval(copy.deepcopy(DATA), "svqa", respond)


def test_proactive_polls_as_the_official_loop_causally_and_exports_scores_as_svqa(svqa_bin, root, tmp_path,
                                                                                  tiny_export, clip):
    folder, records = run(svqa_bin, root, tmp_path, tiny_export("llava_onevision"), "pro",
                          "{type: rekv_sliding_window, options: {n_local: 60}}",
                          "{type: internal, options: {retrieve_size: 2}}")
    official = replay_official(records)
    ids = {"clip_0": official[0]["questions"][0], "clip_1": official[0]["questions"][1],
           "clip_2": official[1]["questions"][0]}
    for qid, r in records.items():
        want = ids[qid]["svqa"]
        got = r["extra"]["dialog_history"]
        assert [(t["role"], t["content"], t["time"]) for t in got] == [
            (t["role"], t["content"], t["time"]) for t in want["dialog_history"]], qid
        assert r["extra"]["answered"] == want["answered"]
        assert r["time"] == got[-1]["time"] and r["prediction"] == got[-1]["content"]
        for user, model in zip(got[0::2], got[1::2]):
            assert model["ttft_s"] > 0 and model["cost"] >= model["ttft_s"]  # each poll timed on its own
            assert all(end <= user["time"] for _, end in model["block_spans"]), (qid, user["time"])
            assert model["block_spans"], "retrieve_size 2: every poll retrieves"
    # Polls of the first two questions interleave (3..12 s and 6..13 s), yet every frame was encoded once.
    assert sum(r["timing"]["encode_frames"] for r in records.values()) == max(
        r["frames_encoded"] for r in records.values())

    out = svqa(svqa_bin, root, "export-results", folder, "--format", "streamingbench", "--model", "svqa")
    assert "3 responses" in out
    exported = json.loads((folder / "streamingbench_results.json").read_text())
    assert exported[0]["questions"][1]["svqa"]["dialog_history"] == records["clip_1"]["extra"]["dialog_history"]
    stats, total = count_proactive(exported, "svqa")
    svqa(svqa_bin, root, "score", "streamingbench_proactive", tmp_path / "pro.json", folder / "predictions.jsonl",
         "--out", tmp_path / "s.json")
    mine = json.loads((tmp_path / "s.json").read_text())["proactive"]
    assert json.loads((folder / "scores.json").read_text())["proactive"] == mine  # the run's own, at its end
    want = stats["Proactive Output"]
    assert (mine["scored"], mine["time_correct"], mine["answer_correct"]) == (
        total, want.get("time_correct", 0), want.get("answer_correct", 0))


@pytest.mark.parametrize("method", ["rekv", "fresh_frames"])
def test_context_window_keeps_every_poll_inside_it(svqa_bin, root, tmp_path, tiny_export, clip, method):
    encoding, retrieval = {
        "rekv": ("{type: rekv_sliding_window, options: {n_local: 60}}", "{type: internal, options: {retrieve_size: 8}}"),
        "fresh_frames": ("{type: fresh_frames, options: {sampling: uniform, frames: 8}}", "{type: full_context}"),
    }[method]
    _, records = run(svqa_bin, root, tmp_path, tiny_export("llava_onevision"), method, encoding, retrieval, window=6)
    for r in records.values():
        assert r["extra"]["context_window"] == [max(0, r["time"] - 6), r["time"]]
        for user, model in zip(r["extra"]["dialog_history"][0::2], r["extra"]["dialog_history"][1::2]):
            spans = model["block_spans"]
            assert spans, (r["question_id"], user["time"])
            assert all(user["time"] - 6 <= start and end <= user["time"] for start, end in spans), (r["question_id"], user)
    # Without the window the late question's polls reach back past it.
    _, whole = run(svqa_bin, root, tmp_path, tiny_export("llava_onevision"), method + "_whole", encoding, retrieval)
    late = whole["clip_2"]["extra"]["dialog_history"]
    assert any(start < late[1]["time"] - 6 for start, _ in late[1]["block_spans"])


def without_timings(folder):
    """predictions.jsonl by question id, without the seconds that differ run to run."""
    from resume_runs import records

    out = records(folder)
    for r in out.values():
        for turn in r["extra"]["dialog_history"]:
            turn.pop("cost"), turn.pop("ttft_s", None)
    return out


@pytest.mark.parametrize("strategy", ["rekv_sliding_window", "streamkv_segments"])
def test_a_killed_proactive_run_resumes_to_the_uninterrupted_records(svqa_bin, root, tmp_path, tiny_export, clip,
                                                                      strategy):
    from resume_runs import STRATEGIES
    from resume_runs import run as run_svqa

    encoding, retrieval, arch = STRATEGIES[strategy]
    for name in ("whole", "killed"):  # every block spilled, a 6 s window copied back from the spill files
        (tmp_path / f"{name}.yaml").write_text(f"""
name: {name}
backbone: {{type: torchscript, options: {{export: {tiny_export(arch)}}}}}
encoding: {encoding}
retrieval: {retrieval}
benchmark: {{type: streamingbench_proactive, options: {{annotations: {tmp_path / 'pro.json'}}}}}
stream: {{frame_times: stride, fps: 0.5, chunk_frames: 4, max_new_tokens: 3, ram_budget_mb: 0, context_window_s: 6}}
runtime: {{threads: 1}}
output: {{dir: {tmp_path / 'results'}}}
""")
    assert run_svqa(svqa_bin, tmp_path / "whole.yaml").returncode == 0
    killed = run_svqa(svqa_bin, tmp_path / "killed.yaml", kill_after=1)
    assert killed.returncode == -9, killed.stderr
    assert len((tmp_path / "results" / "killed" / "predictions.jsonl").read_text().splitlines()) == 1
    resumed = run_svqa(svqa_bin, tmp_path / "killed.yaml")
    assert resumed.returncode == 0 and "1 already answered: resuming" in resumed.stdout, resumed.stdout + resumed.stderr
    assert without_timings(tmp_path / "results" / "killed") == without_timings(tmp_path / "results" / "whole")


def test_the_leaderboards_60_s_window_on_real_time_questions(svqa_bin, root, tmp_path, tiny_export):
    """StreamingBench's --context_time 60 on multiple-choice questions of a 100 s stream: every retrieved
    block inside [t - 60, t]; without the window the same questions reach back before it."""
    svqa(svqa_bin, root, "make-video", tmp_path / "long.avi", "--seconds", "100", "--fps", "1")
    entry = {"time": "[0:00:00 - 0:01:40]", "video_categories": "x", "video_path": "./long.avi", "questions": [
        {"task_type": "Counting", "question": f"How many at {t}?", "time_stamp": f"00:01:{t - 60:02d}", "answer": "A",
         "options": ["A. 1", "B. 2", "C. 3", "D. 4"], "required_ability": "episodic memory"} for t in (75, 90, 99)]}
    (tmp_path / "real.json").write_text(json.dumps([entry]))
    spans = {}
    for name, window in (("w60", 60), ("all", 0)):
        (tmp_path / f"{name}.yaml").write_text(f"""
name: {name}
backbone: {{type: torchscript, options: {{export: {tiny_export("llava_onevision")}}}}}
encoding: {{type: rekv_sliding_window, options: {{n_local: 60}}}}
retrieval: {{type: internal, options: {{retrieve_size: 40}}}}
benchmark: {{type: streamingbench, options: {{annotations: {tmp_path / 'real.json'}}}}}
stream: {{frame_times: stride, fps: 0.5, max_new_tokens: 2, context_window_s: {window}}}
""")
        svqa(svqa_bin, root, "run", tmp_path / f"{name}.yaml", "--out", tmp_path / "results")
        lines = (tmp_path / "results" / name / "predictions.jsonl").read_text().splitlines()
        spans[name] = {r["time"]: (r["block_spans"].values(), r["extra"]) for r in map(json.loads, lines)}
    assert sorted(spans["w60"]) == [75, 90, 99]
    for t, (blocks, extra) in spans["w60"].items():
        assert extra["context_window"] == [t - 60, t]
        assert blocks and all(t - 60 <= start and end <= t for start, end in blocks), t
        # Every frame of the window retrieved (40 asked): frames 2k s from t - 60 on, k < int(t * 0.5).
        assert len(blocks) == len([k for k in range(int(t * 0.5)) if 2 * k >= t - 60]), t
    for t, (blocks, extra) in spans["all"].items():
        assert "context_window" not in extra and any(start < t - 60 for start, _ in blocks), t


def test_proactive_streams_are_answered_not_saved_under_a_memory_cache(svqa_bin, root, tmp_path, tiny_export, clip):
    """A snapshot's log holds each question's calls, not each poll's: with memory.cache on, a proactive
    stream is encoded and answered as without it, nothing is saved, and `svqa encode` says why."""
    encoding, retrieval = "{type: rekv_sliding_window, options: {n_local: 60}}", "{type: internal, options: {retrieve_size: 2}}"
    export = tiny_export("llava_onevision")
    cache = tmp_path / "cache"
    plain, _ = run(svqa_bin, root, tmp_path, export, "plain", encoding, retrieval)
    cached, _ = run(svqa_bin, root, tmp_path, export, "cached", encoding, retrieval, extra=f"memory: {{cache: {cache}}}")
    assert without_timings(cached) == without_timings(plain)
    out = svqa(svqa_bin, root, "encode", tmp_path / "cached.yaml")
    assert "proactive questions poll; their memory is not saved" in out, out
    assert not cache.exists() or not any(p.is_dir() for p in cache.iterdir()), list(cache.iterdir())
