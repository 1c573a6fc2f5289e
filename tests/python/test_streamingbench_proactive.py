"""StreamingBench Proactive Output: `svqa benchmark inspect` reads the official sample with the
official polling schedule and prompts (src/benchmark/StreamingBenchProactive.py, transcribed in
streamingbench_reference.py), and `svqa score` equals count.py's proactive rule question for question
on synthetic predictions covering every case the rule distinguishes."""

import copy
import json
import subprocess

from streamingbench_reference import PROMPT_TEMPLATE_PROACTIVE, count_proactive, proactive_eval

SAMPLE = "streamingbench_questions_proactive.sample.json"


def svqa(svqa_bin, root, *args):
    r = subprocess.run([str(svqa_bin), *map(str, args)], cwd=root, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def never_yes(question, clip_start, clip_end, inp):
    return "No."


def test_inspect_counts_and_polls_equal_the_official_loop(svqa_bin, root, tmp_path):
    sample = root.parent / "shared" / "reference" / "samples" / SAMPLE
    data = json.loads(sample.read_text())
    out = tmp_path / "q.jsonl"
    text = svqa(svqa_bin, root, "benchmark", "inspect", "streamingbench_proactive", sample, "--questions", out)
    assert "videos: 1\n" in text and "questions: 2 (0 multiple choice, 2 proactive (a text to output at the right time), 0 open" in text
    # (29 + 4) - 20 and (178 + 4) - 170 polls: the official loop's, when the model never says yes.
    assert "polls: at most 25 (" in text and "Proactive Output: 2\n" in text and "problems: 0" in text
    official = proactive_eval(copy.deepcopy(data), "m", never_yes)
    got = [json.loads(line) for line in out.read_text().splitlines()]
    assert [q["question_id"] for q in got] == ["sample_17_proactive_0", "sample_17_proactive_1"]
    for q, entry in zip(got, official):
        (question,) = entry["questions"]
        turns = question["m"]["dialog_history"]
        assert q["poll_times"] == [t["time"] for t in turns if t["role"] == "user"]
        assert q["time"] == q["poll_times"][0]
        assert q["poll_prompt"] == PROMPT_TEMPLATE_PROACTIVE.format(turns[0]["content"])
        assert q["prompt"] == PROMPT_TEMPLATE_PROACTIVE.format(question["question"])
        assert q["gold"] == question["ground_truth_output"]


# (ground-truth output, the last turn's time, the last answer, whether the model said yes): gt time 20 s.
FORMS = [
    ("3", 20, "3", True),                    # on time, said
    ("3", 18, "The score is 3.", True),      # -2 s: on time; contained in a sentence
    ("3", 22, "3", True),                    # +2 s: on time
    ("3", 17, "3", True),                    # -3 s: too early
    ("3", 23, "3", True),                    # +3 s: too late
    ("3", 20, "three", True),                # on time, not said
    ("3", 24, "No.", False),                 # never yes: the last poll (gt + 4) is the last turn
    ("3", 19, "", True),                     # on time, empty answer
    ("3", 21, "33", True),                   # substring: "3" occurs in "33"
    ("Goal", 20, "goal", True),              # case-sensitive
    ("USA 20", 20, "It is USA 20 now", True),
    ("3", 12, "Yes, 3", True),               # far too early
]


def test_score_equals_count_py_on_every_form(svqa_bin, root, tmp_path):
    entry = {"time": "[0:00:00 - 0:01:00]", "video_categories": "x", "video_path": "./videos/v_proactive.mp4",
             "questions": []}
    preds = []
    for k, (gt, last, answer, yes) in enumerate(FORMS):
        entry["questions"].append({"task_type": "Proactive Output", "question": f"When it happens, output \"{gt}\".",
                                   "time_stamp": "00:00:10", "ground_truth_time_stamp": "00:00:20",
                                   "ground_truth_output": gt, "required_ability": "working memory"})
        dialog = [{"role": "user", "content": "poll", "time": t, "cost": 0} for t in range(11, last)]
        dialog += [{"role": "user", "content": "poll", "time": last, "cost": 0},
                   {"role": "assistant", "content": "yes" if yes else answer, "time": last, "cost": 0}]
        if yes:
            dialog += [{"role": "user", "content": "q", "time": last, "cost": 0},
                       {"role": "assistant", "content": answer, "time": last, "cost": 0}]
        preds.append({"stream": "v_proactive", "question_id": f"v_proactive_{k}", "prediction": answer, "time": last,
                      "extra": {"dialog_history": dialog, "answered": last if yes else False}})
    # Two more questions: one without a prediction, one whose record is an error: both left out.
    for k in (len(FORMS), len(FORMS) + 1):
        entry["questions"].append(dict(entry["questions"][0]))
    preds.append({"stream": "v_proactive", "question_id": f"v_proactive_{len(FORMS) + 1}", "error": "failed"})
    (tmp_path / "p.json").write_text(json.dumps([entry]))
    (tmp_path / "p.jsonl").write_text("".join(json.dumps(p) + "\n" for p in preds))
    svqa(svqa_bin, root, "score", "streamingbench_proactive", tmp_path / "p.json", tmp_path / "p.jsonl",
         "--out", tmp_path / "s.json")
    got = json.loads((tmp_path / "s.json").read_text())

    official = copy.deepcopy([entry])
    for p in preds:  # what the official loop would have written: the model's key where it answered
        if "error" not in p:
            official[0]["questions"][int(p["question_id"].rsplit("_", 1)[1])]["m"] = p["extra"]
    stats, total = count_proactive(official, "m")
    want = stats["Proactive Output"]
    assert (got["proactive"]["scored"], got["proactive"]["time_correct"], got["proactive"]["answer_correct"]) == (
        total, want["time_correct"], want["answer_correct"]) == (len(FORMS), 8, 5)
    overall = got["overall"]
    assert (overall["correct"], overall["scored"], overall["missing"], overall["errored"]) == (5, len(FORMS), 1, 1)
    # Question by question: correct iff count.py counts it answer-correct.
    for k, (gt, last, answer, yes) in enumerate(FORMS):
        q = next(q for q in got["questions"] if q["question_id"] == f"v_proactive_{k}")
        one, _ = count_proactive([{"questions": [official[0]["questions"][k]]}], "m")
        assert (q["outcome"] == "correct") == bool(one["Proactive Output"].get("answer_correct", 0)), (k, q)
        assert (q["parsed"] == "on time") == bool(one["Proactive Output"].get("time_correct", 0)), (k, q)
