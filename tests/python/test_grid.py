"""End to end: a product grid of 2 retrieval strategies × 2 budgets (one option name, `retrieve_size`) on a synthetic StreamingBench set
(the official questions_real.json format), killed with SIGKILL mid-way, resumed, then compared by
`svqa report`: every question of every run counted once, errors counted, plots written."""

import csv
import io
import json
import os
import signal
import statistics
import subprocess

import pytest

from report_checks import check_figures, check_latex_compiles

# (video, seconds of video, question times); videos at 0.5 fps. A missing video is a fault, not an
# answer (asked again by the next run: test_benchmark_cli.py), so the errors here are questions asked
# after their video's end.
VIDEOS = [("sample_1_real", 60, ["00:00:07", "00:00:19", "00:00:41"]),
          ("sample_2_real", 60, ["00:00:12", "00:00:33", "00:01:30"]),  # the last one is after the video's end
          ("sample_3_real", 4, ["00:00:05", "00:00:20"])]                # both after the video's end
CATEGORIES = ["Object Recognition", "Counting", "Causal Reasoning"]
QUESTIONS = sum(len(times) for _, _, times in VIDEOS)
ERRORED = 1 + 2


def questions_real(videos):
    """One entry per question, as the official file has one per time window."""
    entries = []
    for name, _, times in videos:
        for k, stamp in enumerate(times):
            entries.append({
                "time": f"[{stamp} - {stamp}]",
                "questions": [{"task_type": CATEGORIES[k % 3], "question": "What color is the background?",
                               "time_stamp": stamp, "answer": "B",
                               "options": ["A. Red.", "B. Green.", "C. Blue.", "D. Black."],
                               "required_ability": "episodic memory"}],
                "video_categories": "synthetic",
                "video_path": f"./videos/{name}.avi",
            })
    return entries


@pytest.fixture(scope="module")
def grid(tmp_path_factory, svqa_bin, tiny_export):
    root = tmp_path_factory.mktemp("grid")
    (root / "videos").mkdir()
    for name, seconds, _ in VIDEOS:
        if seconds:
            subprocess.run([svqa_bin, "make-video", root / "videos" / f"{name}.avi", "--seconds", str(seconds)],
                           check=True, capture_output=True)
    (root / "questions_real.json").write_text(json.dumps(questions_real(VIDEOS), indent=1))
    (root / "ablation.yaml").write_text(f"""
name: ablation
backbone: {{type: torchscript, options: {{export: {tiny_export('llava_onevision')}}}}}
encoding: {{type: rekv_sliding_window, options: {{n_local: 60}}}}
retrieval: {{type: internal, options: {{retrieve_size: 4}}}}
benchmark: {{type: streamingbench, options: {{annotations: {root / 'questions_real.json'}, video_root: {root / 'videos'}}}}}
stream: {{fps: 0.5, max_new_tokens: 3}}
output: {{dir: {root / 'results'}}}
grid:
  mode: product
  axes:
    retrieval: [{{type: internal}}, {{type: bank_recent}}]
    retrieval.options.retrieve_size: [2, 4]
""")
    return root


def report(svqa_bin, results, out):
    r = subprocess.run([svqa_bin, "report", results, "--out", out], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr + r.stdout
    with open(out / "report.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    return r.stdout, rows


def test_list_names_runs_and_shards_partition_them(grid, svqa_bin):
    r = subprocess.run([svqa_bin, "grid", grid / "ablation.yaml", "--list"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 4
    assert "ablation__retrieval=internal__retrieve_size=2-" in lines[0]
    assert "ablation__retrieval=bank_recent__retrieve_size=4-" in lines[3]
    mine = []
    for shard in ("0/3", "1/3", "2/3"):
        r = subprocess.run([svqa_bin, "grid", grid / "ablation.yaml", "--list", "--shard", shard], capture_output=True, text=True)
        mine += [line.split()[0] for line in r.stdout.splitlines() if " * " in line]
    assert sorted(mine) == ["0", "1", "2", "3"]
    r = subprocess.run([svqa_bin, "grid", grid / "ablation.yaml", "--shard", "3/3"], capture_output=True, text=True)
    assert r.returncode == 2 and "expected i/N" in r.stderr
    r = subprocess.run([svqa_bin, "run", grid / "ablation.yaml"], capture_output=True, text=True)
    assert r.returncode == 2 and "svqa grid" in r.stderr
    r = subprocess.run([svqa_bin, "validate", grid / "ablation.yaml"], capture_output=True, text=True)
    assert r.returncode == 0 and "grid of 4 runs" in r.stdout


def test_killed_grid_resumes_and_report_counts_every_question_once(grid, svqa_bin, tmp_path):
    results = grid / "results" / "ablation"
    # The runner kills itself (SIGKILL) once its 11th record is on disk: the first run's 8 and 3 of the
    # second's, whatever the machine's speed.
    env = dict(os.environ, SVQA_KILL_AFTER_RECORDS=str(QUESTIONS + 3))
    proc = subprocess.run([svqa_bin, "grid", grid / "ablation.yaml"], env=env, capture_output=True, timeout=600)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert len(list(results.glob("*/scores.json"))) == 1  # the first run finished, the second did not

    # A report of the killed grid: what is there, the rest missing, nothing counted twice.
    _, rows = report(svqa_bin, results, grid / "report-killed")
    overall = [r for r in rows if r["category"] == "overall"]
    assert 2 <= len(overall) <= 4
    assert all(int(r["questions"]) == QUESTIONS for r in overall)
    assert sum(int(r["missing"]) for r in overall) == (len(overall) - 1) * QUESTIONS - 3

    r = subprocess.run([svqa_bin, "grid", grid / "ablation.yaml"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "== runs of this grid [" in r.stdout and "ETA" in r.stdout  # progress
    runs = sorted(d for d in results.iterdir() if d.is_dir() and d.name != "memory_cache")  # the runs' shared cache
    assert len(runs) == 4
    listing = json.loads((results / "grid.json").read_text())["runs"]  # the grid's order, for the report
    assert listing == [f"ablation__retrieval={s}__retrieve_size={n}" for s in ("internal", "bank_recent") for n in (2, 4)]
    expected = sorted((name, f"{name}_{k}") for name, _, times in VIDEOS for k in range(len(times)))
    for run in runs:
        records = [json.loads(x) for x in (run / "predictions.jsonl").read_text().splitlines()]
        assert sorted((x["stream"], x["question_id"]) for x in records) == expected, run.name
        errors = [x for x in records if "error" in x]
        assert len(errors) == ERRORED, run.name
        assert all("after the end of the stream" in x["error"] and "fault" not in x for x in errors)
        assert sum(x["stream"] == "sample_3_real" for x in errors) == 2
        scores = json.loads((run / "scores.json").read_text())
        assert scores["overall"]["questions"] == QUESTIONS and scores["overall"]["errored"] == ERRORED

    stdout, rows = report(svqa_bin, results, grid / "report")
    overall = {r["run"]: r for r in rows if r["category"] == "overall"}
    assert sorted(overall) == sorted(f"ablation__retrieval={s}__retrieve_size={n}" for s in ("internal", "bank_recent") for n in (2, 4))
    for name, row in overall.items():
        run_dir = next(d for d in runs if d.name.startswith(name + "-"))
        records = [json.loads(x) for x in (run_dir / "predictions.jsonl").read_text().splitlines()]
        answered = [x for x in records if "error" not in x]
        assert int(row["questions"]) == QUESTIONS and int(row["missing"]) == 0 and int(row["errored"]) == ERRORED
        assert int(row["scored"]) + int(row["unanswered"]) + int(row["errored"]) == QUESTIONS
        if int(row["scored"]):
            assert float(row["accuracy"]) == pytest.approx(int(row["correct"]) / int(row["scored"]), abs=1e-6)
        mean_memory = sum(x["memory"]["tokens"] for x in answered) / len(answered)
        assert float(row["memory_tokens"]) == pytest.approx(mean_memory, abs=0.05)
        assert float(row["encode_fps"]) > 0 and float(row["ttft_s"]) > 0 and float(row["inference_tokens"]) > 0
        # TTFT: the median over answered questions, each stream's first (warm-up) left out; its range beside it.
        timed = [x["timing"]["ttft_s"] for k, x in enumerate(answered)
                 if any(y["stream"] == x["stream"] for y in answered[:k])]
        assert float(row["ttft_s"]) == pytest.approx(statistics.median(timed), abs=1e-4)
        assert float(row["ttft_s_min"]) == pytest.approx(min(timed), abs=1e-4) and int(row["timed_questions"]) == len(timed)
        assert row["busy"] in ("yes", "no") and int(row["cpus"]) > 0
        assert row["method"] == "rekv_sliding_window + " + ("internal" if "internal" in name else "bank_recent")
        assert ("retrieval_scores" in answered[0]) == ("internal" in name)
        # Per category rows add up to the overall row (one category per question here).
        per_category = [r for r in rows if r["run"] == name and r["category"] in CATEGORIES]
        assert sum(int(r["questions"]) for r in per_category) == QUESTIONS
    assert stdout.count("| rekv_sliding_window + ") == 4 and "Object Recognition %" in stdout
    assert (grid / "report" / "report.md").read_text() in stdout
    # Rows in the grid's order (first axis outermost), not by name; the settings tell a method's runs apart.
    settings = [f"retrieval={s}, retrieve_size={n}" for s in ("internal", "bank_recent") for n in (2, 4)]
    rows_at = [stdout.index(f"| {s} |") for s in settings]
    assert rows_at == sorted(rows_at), stdout
    figures = check_figures(grid / "report", settings)
    for name in ("ttft_vs_stream_time", "retrieval_temporal_bias", "retrieval_scores"):
        assert all((grid / "report" / f"{name}.{ext}").stat().st_size > 0 for ext in ("pdf", "svg", "png")), name
    # Every answered question but each stream's first (warm-up, left out as in the table): 2 streams answer.
    assert len(figures["ttft_vs_stream_time"]["points"]) == 4 * (QUESTIONS - ERRORED - 2)
    check_latex_compiles(grid / "report", tmp_path)


def test_report_names_a_broken_run_and_a_bad_directory(grid, svqa_bin, tmp_path):
    r = subprocess.run([svqa_bin, "report", tmp_path / "nowhere"], capture_output=True, text=True)
    assert r.returncode == 1 and "nowhere: no such directory" in r.stderr
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.yaml").write_text("name: broken\nbenchmark: {type: streamingbench, options: {annotations: /missing.json}}\n")
    (broken / "predictions.jsonl").write_text("")
    r = subprocess.run([svqa_bin, "report", broken], capture_output=True, text=True)
    assert r.returncode == 1 and "Runs not summarised" in r.stdout and "/missing.json" in r.stdout
