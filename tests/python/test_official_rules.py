"""Answer formats that the official scorers (Python) read with str.strip() and re's \\b / \\w on
Unicode text, fed through `svqa score` for each rule; the expected outcome of every one is computed
here with Python's own str and re, as the official scripts compute it (the audit's items 12–14)."""

import json
import re
import subprocess

import pytest

# Outputs whose reading depends on what counts as whitespace (str.strip) or as a word character (\w).
OUTPUTS = [
    "C", "\u00a0C", "\u3000B", "\u0085A)", "C\u2028", "\u2003(D) four", "\x1cB", "\u200bC", "\ufeffA", "\u180eC",
    " \u2009 B) two \u202f", "Answer→C", "✅D", "x²F", "٣A", "ⅫB", "中C", "C。", "«B»", "éC", "_A", "A_", "ＡB",
    "1A", "B²", "·C", "ªC", "µC", "¹A", "A or C", "(C)", "C\u00a0", "",
]


def python_strip_then_letter(output):
    """ReKV's rule: strip; the character before the first ')', else the first character."""
    s = output.strip()
    if ")" in s:
        i = s.index(")")
        return s[i - 1:i]
    return s[:1]


def python_mlvu_reading(output):
    """MLVU's check_ans: strip; the character before the first ')', else the whole output."""
    s = output.strip()
    if ")" in s:
        i = s.index(")")
        return s[i - 1:i]
    return s


def mlvu_gold(candidates, answer):
    """MLVU's qa_template: the last equal candidate; none equal leaves index -1, i.e. '(@)'."""
    index = -1
    for i, c in enumerate(candidates):
        if c == answer:
            index = i
    return chr(ord("A") + index)


def score(svqa_bin, root, tmp_path, benchmark, annotations, predictions, *extra):
    preds = tmp_path / f"{benchmark}.jsonl"
    preds.write_text("".join(json.dumps(p) + "\n" for p in predictions))
    out = tmp_path / f"{benchmark}.score.json"
    r = subprocess.run([str(svqa_bin), "score", benchmark, str(annotations), str(preds), "--out", str(out), *extra],
                       cwd=root, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return {q["question_id"]: q for q in json.loads(out.read_text())["questions"]}


def mismatches(got, want):
    return [(qid, got[qid]["outcome"], got[qid].get("parsed"), w) for qid, w in want.items() if got[qid]["outcome"] != w]


def test_cgbench_letters_are_found_as_pythons_word_boundaries(svqa_bin, root, tmp_path):
    choices = ["one", "two", "three", "four", "five", "six", "seven", "eight"]
    records, preds, want = [], [], {}
    for gold in "ABCDF":
        for i, output in enumerate(OUTPUTS):
            qid = f"{gold}{i}"
            records.append({"qid": qid, "video_uid": "v", "question": "Which?", "answer": choices[ord(gold) - 65],
                            "choices": choices, "right_answer": gold, "clue_intervals": [[0, 1]],
                            "sub_category": "S", "domain": "D"})
            preds.append({"question_id": qid, "prediction": output})
            letters = re.findall(r"\b[A-H]\b", output)  # run/utils.py, on a str: Unicode \b and \w
            want[qid] = "unanswered" if not letters else "correct" if gold in letters else "wrong"
    (tmp_path / "cg.json").write_text(json.dumps(records))
    got = score(svqa_bin, root, tmp_path, "cgbench", tmp_path / "cg.json", preds)
    assert not mismatches(got, want), mismatches(got, want)
    # The audit's three, as the official script reads them:
    assert (want["C11"], want["D12"], want["F13"]) == ("correct", "correct", "unanswered")


@pytest.fixture
def mlvu_file(tmp_path):
    """One official MLVU task file: per output, a question whose answer is option C, and one whose
    answer is among no options (gold "(@)")."""
    candidates = ["red", "green", "blue", "white"]
    records = []
    for output in OUTPUTS:
        records.append({"video": "movie.mp4", "duration": 60, "question": "Which?", "candidates": candidates,
                        "answer": "blue", "question_type": "plotQA"})
        records.append({"video": "movie.mp4", "duration": 60, "question": "Which?", "candidates": candidates,
                        "answer": "purple", "question_type": "plotQA"})
    path = tmp_path / "plotQA.json"
    path.write_text(json.dumps(records))
    return path, records


def mlvu_predictions(records):
    return [{"question_id": f"plotQA/movie_{i}", "prediction": OUTPUTS[i // 2]} for i in range(len(records))]


def test_mlvu_strips_unicode_whitespace_and_scores_an_answer_outside_the_options_wrong(svqa_bin, root, tmp_path,
                                                                                        mlvu_file):
    path, records = mlvu_file
    want = {}
    for i, rec in enumerate(records):
        gold = mlvu_gold(rec["candidates"], rec["answer"])
        want[f"plotQA/movie_{i}"] = "correct" if python_mlvu_reading(OUTPUTS[i // 2]) == gold else "wrong"
    got = score(svqa_bin, root, tmp_path, "mlvu", path, mlvu_predictions(records))
    assert not mismatches(got, want), mismatches(got, want)
    assert got["plotQA/movie_2"]["outcome"] == "correct"  # "\u00a0C": right for the official script
    assert {got[f"plotQA/movie_{i}"]["outcome"] for i in range(1, len(records), 2)} == {"wrong"}  # gold (@)


def test_rekv_rule_strips_unicode_whitespace(svqa_bin, root, tmp_path, mlvu_file):
    path, records = mlvu_file
    want = {f"plotQA/movie_{i}": "correct" if python_strip_then_letter(OUTPUTS[i // 2]) == "C" else "wrong"
            for i in range(0, len(records), 2)}
    got = score(svqa_bin, root, tmp_path, "mlvu", path, mlvu_predictions(records), "--set", "rule=rekv")
    assert not mismatches(got, want), mismatches(got, want)
    assert got["plotQA/movie_2"]["outcome"] == "correct"
