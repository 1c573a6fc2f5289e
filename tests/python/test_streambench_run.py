"""Tiny end-to-end runs of the new protocols on a synthetic stream (a tiny random LLaVA-OneVision
export): OVO-Bench's forward probes, each asked at its own time, and StreamingBench SQA's context;
then `svqa export-results` and the official scorers (transcribed) on the exported files give svqa's
own scores. Every record is causal: no retrieved block ends after its question's time."""

import copy
import json
import subprocess

import pytest

from ovobench_reference import official_scores
from test_streamingbench_sqa import official_prompts


def svqa(svqa_bin, root, *args):
    r = subprocess.run([str(svqa_bin), *map(str, args)], cwd=root, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def run(svqa_bin, root, tmp_path, export, name, benchmark):
    (tmp_path / f"{name}.yaml").write_text(f"""
name: {name}
backbone: {{type: torchscript, options: {{export: {export}}}}}
encoding: {{type: rekv_sliding_window, options: {{n_local: 60}}}}
retrieval: {{type: internal, options: {{retrieve_size: 2}}}}
benchmark: {benchmark}
stream: {{fps: 0.5, max_new_tokens: 3}}
""")
    svqa(svqa_bin, root, "run", tmp_path / f"{name}.yaml", "--out", tmp_path / "results")
    folder = tmp_path / "results" / name
    records = [json.loads(line) for line in (folder / "predictions.jsonl").read_text().splitlines()]
    for r in records:  # causality: every retrieved block ends by the question's time
        assert "error" not in r, r
        assert all(end <= r["time"] for _, end in r.get("block_spans", {}).values()), r["question_id"]
    return folder, {r["question_id"]: r for r in records}


@pytest.fixture
def clip(svqa_bin, root, tmp_path):
    svqa(svqa_bin, root, "make-video", tmp_path / "clip.avi", "--seconds", "30", "--fps", "2")
    return tmp_path / "clip.avi"


OVO = [
    {"id": 7, "task": "EPM", "video": "clip.avi", "realtime": 10.2, "question": "What color?", "answer": "red",
     "options": ["red", "green", "blue", "white"], "gt": 0},
    {"id": 8, "task": "OCR", "video": "clip.avi", "realtime": 20, "question": "Which text?", "answer": "b",
     "options": ["a", "b", "c"], "gt": 1},
    {"id": 9, "task": "REC", "video": "clip.avi", "activity": "jump", "start_times": [2], "end_times": [4],
     "test_info": [{"realtime": 5, "count": 1}, {"realtime": 12.5, "count": 2}, {"realtime": 28, "count": 0}]},
    {"id": 10, "task": "SSR", "video": "clip.avi", "tutorial": "T", "all_steps": ["stir", "pour"],
     "start_time": [1, 9], "end_time": [8, 20],
     "test_info": [{"realtime": 4, "step": "stir", "type": 1}, {"realtime": 6, "step": "pour", "type": 0}]},
    {"id": 11, "task": "CRR", "video": "clip.avi", "question": "Where does he go?", "answer": "out", "ask_time": 6,
     "clue_time": 16, "test_info": [{"realtime": 6, "type": 0}, {"realtime": 17, "type": 1}]},
]


def test_ovobench_probes_run_at_their_times_and_export_scores_as_svqa(svqa_bin, root, tmp_path, tiny_export, clip):
    (tmp_path / "ovo.json").write_text(json.dumps(OVO))
    folder, records = run(svqa_bin, root, tmp_path, tiny_export("llava_onevision"), "ovo",
                          f"{{type: ovobench, options: {{annotations: {tmp_path / 'ovo.json'}}}}}")
    want_times = {"7": 11, "8": 20, "9_0": 5, "9_1": 13, "9_2": 28, "10_0": 4, "10_1": 6, "11_0": 6, "11_1": 17}
    assert {q: r["time"] for q, r in records.items()} == want_times
    assert records["9_1"]["extra"]["item"] == "9" and records["9_1"]["extra"]["probe"] == "1"

    out = svqa(svqa_bin, root, "export-results", folder, "--format", "ovobench")
    assert "9 responses, 0 error records" in out
    exported = json.loads((folder / "ovobench_results.json").read_text())
    assert [e["id"] for e in exported["forward"]] == [9, 10, 11]
    assert exported["forward"][0]["test_info"][1]["response"] == records["9_1"]["prediction"]
    official = official_scores(copy.deepcopy(exported))
    svqa(svqa_bin, root, "score", "ovobench", tmp_path / "ovo.json", folder / "predictions.jsonl", "--out",
         tmp_path / "s.json")
    mine = json.loads((tmp_path / "s.json").read_text())["ovobench"]
    assert {t["task"]: t["score"] for t in mine["tasks"]} == pytest.approx(official["tasks"], abs=1e-12)
    assert mine["total"]["score"] == pytest.approx(official["total"], abs=1e-12)


def count_py_sqa(data, model):
    """src/data/count.py, task sqa: the first character of each answer against `answer`."""
    total = correct = 0
    for ques in data:
        for entry in ques:
            for question in entry["questions"]:
                if model not in question or not question.get(model, None):
                    continue
                model_answer = question.get(model, None)[0]
                if model_answer:
                    total += 1
                    correct += question["answer"] == model_answer
    return correct, total


def test_sqa_run_asks_with_the_official_context_and_export_scores_as_svqa(svqa_bin, root, tmp_path, tiny_export,
                                                                         clip):
    video = [{"time": "[0:00:00 - 0:00:30]", "video_categories": "x", "video_path": "./clip.avi", "questions": [
        {"task_type": "Sequential Question Answering", "question": f"Q{k}?", "time_stamp": f"00:00:{t:02d}",
         "answer": "ABCD"[k % 4], "options": ["one", "two", "three", "four"], "required_ability": "episodic memory"}
        for k, t in enumerate([5, 12, 9, 25])]}]
    (tmp_path / "sqa.json").write_text(json.dumps([video]))
    folder, records = run(svqa_bin, root, tmp_path, tiny_export("llava_onevision"), "sqa",
                          f"{{type: streamingbench_sqa, options: {{annotations: {tmp_path / 'sqa.json'}, "
                          f"video_path_keep: 1}}}}")
    assert {q: r["time"] for q, r in records.items()} == {"clip_0": 5, "clip_1": 12, "clip_2": 9, "clip_3": 25}
    questions = tmp_path / "q.jsonl"
    svqa(svqa_bin, root, "benchmark", "inspect", "streamingbench_sqa", tmp_path / "sqa.json", "--questions", questions)
    prompts = {q["question_id"]: q["prompt"] for q in map(json.loads, questions.read_text().splitlines())}
    assert prompts == official_prompts([video])

    out = svqa(svqa_bin, root, "export-results", folder, "--format", "streamingbench", "--model", "svqa")
    assert "4 responses" in out
    exported = json.loads((folder / "streamingbench_results.json").read_text())
    correct, total = count_py_sqa(exported, "svqa")
    svqa(svqa_bin, root, "score", "streamingbench_sqa", tmp_path / "sqa.json", folder / "predictions.jsonl", "--out",
         tmp_path / "s.json")
    overall = json.loads((tmp_path / "s.json").read_text())["overall"]
    assert (overall["correct"], overall["scored"]) == (correct, total)
