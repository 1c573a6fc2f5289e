"""OVO-Bench: the loader's counts on the official sample, and `svqa score` against the official
scorer (tests/python/ovobench_reference.py, transcribed) on synthetic responses covering every form
its rules tell apart: the same entries, the same task, group and total figures."""

import copy
import json
import math
import subprocess
from collections import Counter

import pytest

import ovobench_constant as constant
from ovobench_reference import official_scores, results_file

# Responses every rule reads differently: the letter test is a substring test ("Answer: B" holds A,
# "The answer is D" holds D), REC joins every digit (Unicode \d: "٣" is a digit, not "3"), SSR/CRR
# take exact "Y"/"N" or the word anywhere ("No" in "Not sure", "Yes" not in "yes").
RESPONSES = ["A", "B", "C", "D", "E", "(C)", "Answer: B", "The answer is D", "a", "", None, "ＡB", "C. because A",
             "3", "1", "0", "2 times", "1, 2", "12", "٣", "three", "Yes", "No", "Y", "N", "yes", "Not sure", "Y.",
             " N", "NoYes", "Nope", "YES"]


@pytest.fixture(scope="module")
def sample(root):
    return root.parent / "shared" / "reference" / "samples" / "ovobench_new.sample.json"


def svqa(svqa_bin, root, *args):
    r = subprocess.run([str(svqa_bin), *map(str, args)], cwd=root, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def question_ids(annotations):
    for a in annotations:
        if "test_info" in a:
            yield from (f"{a['id']}_{i}" for i in range(len(a["test_info"])))
        else:
            yield str(a["id"])


def test_inspect_counts_items_and_probes_of_the_sample(svqa_bin, root, sample):
    annotations = json.loads(sample.read_text())
    out = svqa(svqa_bin, root, "benchmark", "inspect", "ovobench", sample)
    probes = {a["task"]: 0 for a in annotations}
    for a in annotations:
        probes[a["task"]] += len(a.get("test_info", [None]))
    assert f"videos: {len({a['video'] for a in annotations})}\n" in out
    assert "questions: 64 (18 multiple choice, 46 closed without options (a count, Yes/No), 0 open-ended" in out
    assert sum(probes.values()) == 64
    assert "items (annotation records; a record asked at several times is one item): 24\n" in out
    for task, n in probes.items():
        assert f"  {task}: {n}" + (" (2 items)" if n != 2 else "") + "\n" in out, task
    assert probes == {**{t: 2 for t in ["EPM", "HLD", "ASI", "STU", "OJR", "ATR", "FPD", "ACR", "OCR"]},
                      "CRR": 10, "SSR": 29, "REC": 7}


@pytest.mark.parametrize("offset", [0, 7, 19])
def test_score_equals_the_official_scorer_on_every_response_form(svqa_bin, root, sample, tmp_path, offset):
    annotations = json.loads(sample.read_text())
    ids = list(question_ids(annotations))
    response = {qid: RESPONSES[(i + offset) % len(RESPONSES)] for i, qid in enumerate(ids)}
    official = official_scores(results_file(copy.deepcopy(annotations), response.__getitem__))

    # svqa's JSON Lines records (null: no text, as "") and the official results file itself.
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps({"question_id": q, "prediction": r or ""}) + "\n" for q, r in response.items()))
    results = tmp_path / "results.json"
    results.write_text(json.dumps(results_file(copy.deepcopy(annotations), response.__getitem__)))
    for predictions in (preds, results):
        out = tmp_path / "score.json"
        svqa(svqa_bin, root, "score", "ovobench", sample, predictions, "--out", out)
        got = json.loads(out.read_text())["ovobench"]
        assert {t["task"]: t["score"] for t in got["tasks"]} == pytest.approx(official["tasks"], abs=1e-12)
        assert {g["group"]: g["score"] for g in got["groups"]} == pytest.approx(official["groups"], abs=1e-12)
        assert got["total"]["score"] == pytest.approx(official["total"], abs=1e-12)
    # Every form occurs, and the quirks do what the official code does.
    assert set(RESPONSES) <= set(response.values()) or offset
    outcomes = {q["question_id"]: q["outcome"] for q in json.loads(out.read_text())["questions"]}
    assert Counter(outcomes.values())["correct"] > 0 and Counter(outcomes.values())["wrong"] > 0


def test_substring_letter_and_digit_quirks_one_by_one(svqa_bin, root, sample, tmp_path):
    annotations = json.loads(sample.read_text())
    epm = next(a for a in annotations if a["task"] == "EPM")  # gold C
    rec = next(a for a in annotations if a["task"] == "REC")
    ssr = next(a for a in annotations if a["task"] == "SSR")
    no_probe = next(i for i, p in enumerate(ssr["test_info"]) if p["type"] == 0)
    assert chr(65 + epm["gt"]) == "C" and rec["test_info"][0]["count"] == 1
    cases = [(str(epm["id"]), "Correct answer: B", "correct"),  # "C" of "Correct"
             (str(epm["id"]), "B", "wrong"),
             (f"{rec['id']}_0", "I count 1 (one) time, not 0", "wrong"),  # "10"
             (f"{rec['id']}_0", "1", "correct"),
             (f"{ssr['id']}_{no_probe}", "Not really", "correct"),  # "No" in "Not"
             (f"{ssr['id']}_{no_probe}", "N", "correct"),
             (f"{ssr['id']}_{no_probe}", "no", "wrong")]
    for qid, text, want in cases:
        preds = tmp_path / "one.jsonl"
        preds.write_text(json.dumps({"question_id": qid, "prediction": text}) + "\n")
        out = tmp_path / "one.json"
        svqa(svqa_bin, root, "score", "ovobench", sample, preds, "--out", out)
        got = {q["question_id"]: q["outcome"] for q in json.loads(out.read_text())["questions"]}
        assert got[qid] == want, (qid, text)


def test_per_item_average_is_reported_beside_the_pooled_score(svqa_bin, root, sample, tmp_path):
    annotations = json.loads(sample.read_text())
    ssr = [a for a in annotations if a["task"] == "SSR"]
    # First SSR record: every probe right; second: every probe wrong. Pooled: 12/29; per item: 1/2.
    response = {}
    for a in ssr:
        for i, p in enumerate(a["test_info"]):
            right = "Yes" if p["type"] else "No"
            response[f"{a['id']}_{i}"] = right if a is ssr[0] else ("No" if p["type"] else "Yes")
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps({"question_id": q, "prediction": r}) + "\n" for q, r in response.items()))
    out = tmp_path / "s.json"
    md = svqa(svqa_bin, root, "score", "ovobench", sample, preds, "--out", out)
    task = next(t for t in json.loads(out.read_text())["ovobench"]["tasks"] if t["task"] == "SSR")
    n0 = len(ssr[0]["test_info"])
    assert (task["entries"], task["correct"], task["items"]) == (29, n0, 2)
    assert task["score"] == pytest.approx(n0 / 29) and task["per_item"] == pytest.approx(0.5)
    assert f"| SSR | forward | 2 | 29 | {n0} | {100 * n0 / 29:.2f} | 50.00 |" in md



def test_prompts_and_ask_times_are_the_official_ones(svqa_bin, root, sample, tmp_path):
    """build_prompt (utils/OVOBench.py) with constant.py's templates, and the clip ends of
    utils/chunk_videos.py (ceil of realtime), for every entry and probe of the sample."""
    def build_prompt(task, question, options, _anno_, index):  # verbatim
        if task in ["EPM", "ASI", "HLD", "STU", "OJR", "ATR", "ACR", "OCR", "FPD"]:
            formatted_options = '; '.join(f'{chr(65 + i)}. {option}' for i, option in enumerate(options)) + ';'
            prompt = constant.BR_PROMPT_TEMPLATE.format(question, formatted_options)
        elif task == "REC":
            activity = _anno_["activity"]
            question = "How many times did they " + activity + "?"
            prompt = constant.REC_PROMPT_TEMPLATE.format(question)
        elif task == "SSR":
            step = _anno_["test_info"][index]["step"]
            prompt = constant.SSR_PROMPT_TEMPLATE.format(step)
        elif task == "CRR":
            question = _anno_["question"]
            prompt = constant.CRR_PROMPT_TEMPLATE.format(question)
        return prompt

    want = {}
    for a in json.loads(sample.read_text()):
        if "test_info" in a:
            for i, probe in enumerate(a["test_info"]):
                want[f"{a['id']}_{i}"] = (build_prompt(a["task"], None, None, a, i), math.ceil(probe["realtime"]))
        else:
            want[str(a["id"])] = (build_prompt(a["task"], a["question"], a["options"], None, None),
                                  math.ceil(a["realtime"]))
    out = tmp_path / "questions.jsonl"
    svqa(svqa_bin, root, "benchmark", "inspect", "ovobench", sample, "--questions", out)
    got = {q["question_id"]: (q["prompt"], q["time"]) for q in map(json.loads, out.read_text().splitlines())}
    assert got == want
