"""`svqa benchmark inspect` and `svqa score` end to end on the real sample annotation files."""

import json
import subprocess

import pytest


def svqa(svqa_bin, root, *args):
    return subprocess.run([str(svqa_bin), *args], cwd=root, capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def samples(root):
    path = root.parent / "shared" / "reference" / "samples"
    if not path.is_dir():
        pytest.fail(f"{path} not found: the shared reference folder must sit beside the repository")
    return path


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_inspect_streamingbench_counts_and_quirks(svqa_bin, root, samples):
    r = svqa(svqa_bin, root, "benchmark", "inspect", "streamingbench",
             str(samples / "streamingbench_questions_real.sample.json"))
    assert r.returncode == 0, r.stderr
    assert "answer rule: streamingbench" in r.stdout
    assert "videos: 3\n" in r.stdout
    assert "questions: 15 (15 multiple choice, 0 open-ended; 0 offline, 15 asked at a time; 0 with evidence)" in r.stdout
    assert "options per question: 4 (15)" in r.stdout
    assert "  Clips Summarize: " in r.stdout
    assert '[7].questions[1].time_stamp: malformed time_stamp "00:12450" read as 0:12:45' in r.stdout
    assert "error:" not in r.stdout


def test_inspect_reports_every_unusable_record_and_exits_1(svqa_bin, root, tmp_path):
    bad = tmp_path / "cg.json"
    bad.write_text(json.dumps([
        {"qid": 1, "video_uid": "v", "answer": "a", "choices": ["a", "b"], "right_answer": "A",
         "clue_intervals": [[1, 2]], "sub_category": "S"},
        {"qid": 2, "video_uid": "v", "question": "Q?", "answer": "a", "choices": ["a", "b"], "right_answer": "A",
         "clue_intervals": "soon", "sub_category": "S"},
    ]))
    r = svqa(svqa_bin, root, "benchmark", "inspect", "cgbench", str(bad))
    assert r.returncode == 1
    assert f"error: {bad}: [0].question: missing" in r.stdout
    assert f'error: {bad}: [1].clue_intervals: expected a list of [start, end] pairs, got "soon"' in r.stdout
    assert "problems: 2 (2 make a record unusable)" in r.stdout


def test_inspect_checks_videos_under_the_video_root(svqa_bin, root, samples, tmp_path):
    (tmp_path / "3ZpmN3-2-Zo.mp4").write_bytes(b"")
    r = svqa(svqa_bin, root, "benchmark", "inspect", "cgbench", str(samples / "cgbench_mini.sample.json"),
             "--video-root", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert f"BV175411f7As: video not found: {tmp_path}/BV175411f7As.mp4" in r.stdout
    assert "3ZpmN3-2-Zo: video not found" not in r.stdout
    assert "options per question: 6 (2) 7 (4) 8 (2)" in r.stdout


def test_unknown_benchmark_and_bad_option_are_usage_errors(svqa_bin, root, samples):
    r = svqa(svqa_bin, root, "benchmark", "inspect", "cgbenc", "x.json")
    assert r.returncode == 2
    assert "unknown benchmark 'cgbenc' (did you mean 'cgbench'?)" in r.stderr
    r = svqa(svqa_bin, root, "benchmark", "inspect", "cgbench", "x.json", "--set", "rule=offical")
    assert r.returncode == 2
    assert "benchmark.options.rule: expected one of official, rekv" in r.stderr


def test_score_other_systems_predictions_with_cgbench_rules(svqa_bin, root, samples, tmp_path):
    preds = write_jsonl(tmp_path / "preds.jsonl", [
        {"id": 14, "response": '```json\n{"result": "E"}\n```'},   # correct (JSON block)
        {"id": 4, "response": "A or C"},                              # correct: C is among the letters
        {"id": 346, "response": '```json\n{"result": B}\n```'},     # wrong (gold C)
        {"id": 384, "response": "I cannot tell"},                     # no letter A-H: unanswered
        {"id": 4424, "response": "E"},                                # wrong: gold A (FOWL is also E)
    ])
    out = tmp_path / "score.json"
    r = svqa(svqa_bin, root, "score", "cgbench", str(samples / "cgbench_mini.sample.json"), str(preds),
             "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "answers judged by the cgbench rule" in r.stdout
    assert "| **overall** | 8 | 4 | 2 | 50.0 |" in r.stdout
    assert "1 unanswered (left out by the rule), 3 without a prediction" in r.stdout
    j = json.loads(out.read_text())
    assert j["overall"]["accuracy"] == 0.5
    outcomes = {q["question_id"]: q["outcome"] for q in j["questions"]}
    assert outcomes == {"14": "correct", "4": "correct", "346": "wrong", "384": "unanswered", "4424": "wrong",
                        "2415": "missing", "6340": "missing", "7569": "missing"}


def test_score_same_predictions_with_rekv_rule(svqa_bin, root, samples, tmp_path):
    preds = write_jsonl(tmp_path / "preds.jsonl", [{"question_id": "14", "prediction": "E) White"},
                                                   {"question_id": "4424", "prediction": "E"}])
    r = svqa(svqa_bin, root, "score", "cgbench", str(samples / "cgbench_mini.sample.json"), str(preds),
             "--set", "rule=rekv")
    assert r.returncode == 0, r.stderr
    assert "| **overall** | 8 | 2 | 1 | 50.0 |" in r.stdout


def test_score_svqa_predictions_jsonl_with_recall(svqa_bin, root, samples, tmp_path):
    vid = "af400f98-3c57-46ad-acac-eaca6f940180"  # 31 questions, first window [540, 840]
    preds = write_jsonl(tmp_path / "predictions.jsonl", [
        {"stream": vid, "question_id": f"{vid}_0", "time": 840.0, "prediction": "A field.", "reference": "x",
         "retrieved": [[3, 4], [700]], "block_spans": {"3": [3.0, 5.0], "4": [5.0, 7.0], "700": [700.0, 702.0]}},
        {"stream": vid, "question_id": f"{vid}_1", "time": 840.0, "prediction": "Walking.",
         "retrieved": [[3]], "block_spans": {"3": [3.0, 5.0]}},
        {"stream": vid, "question_id": f"{vid}_2", "time": 840.0, "error": "video not found"},
    ])
    r = svqa(svqa_bin, root, "score", "rvs_ego", str(samples / "rvs_ego4d_oe.sample.json"), str(preds))
    assert r.returncode == 0, r.stderr
    assert "open-ended: 187 questions, 2 answered; they need the GPT judge" in r.stdout
    assert "retrieval recall (a block retrieved at any layer overlaps the evidence): 1 / 2 = 50.0 %" in r.stdout


def test_score_mlvu_shows_m_avg(svqa_bin, root, samples, tmp_path):
    preds = write_jsonl(tmp_path / "p.jsonl", [
        {"stream": "1_plotQA/movie101_16", "question_id": "1_plotQA/movie101_16_0", "prediction": "A) Red"},
        {"stream": "surveil_6", "question_id": "surveil_6_0", "prediction": "A) Shooting"},  # official gold: D
    ])
    r = svqa(svqa_bin, root, "score", "mlvu", str(samples / "mlvu_dev_debug_mc.sample.json"), str(preds))
    assert r.returncode == 0, r.stderr
    assert "| Anomaly — anomaly_reco | 1 | 1 | 0 | 0.0 |" in r.stdout
    assert "| **M-Avg** (mean of the task accuracies) | | | | 50.0 |" in r.stdout
    r = svqa(svqa_bin, root, "score", "mlvu", str(samples / "mlvu_dev_debug_mc.sample.json"), str(preds),
             "--set", "rule=rekv")
    assert "| **M-Avg** (mean of the task accuracies) | | | | 100.0 |" in r.stdout


def test_score_bad_prediction_line_names_file_line_and_field(svqa_bin, root, samples, tmp_path):
    preds = tmp_path / "p.jsonl"
    preds.write_text('{"question_id": "14", "prediction": "A"}\n{"prediction": "B"}\n')
    r = svqa(svqa_bin, root, "score", "cgbench", str(samples / "cgbench_mini.sample.json"), str(preds))
    assert r.returncode == 1
    assert f"{preds}:2: question_id: missing" in r.stderr


def test_offline_questions_are_asked_after_the_whole_video_and_a_missing_video_is_asked_again(svqa_bin, root, tmp_path,
                                                                                              tiny_export):
    export = tiny_export("llava_onevision")
    r = svqa(svqa_bin, root, "make-video", str(tmp_path / "clip.avi"), "--seconds", "30", "--fps", "2")
    assert r.returncode == 0, r.stderr
    (tmp_path / "cg.json").write_text(json.dumps([
        {"qid": 1, "video_uid": "clip", "question": "What color is the background at the start?", "answer": "red",
         "choices": ["green", "red", "blue", "white", "black"], "right_answer": "B", "clue_intervals": [[0, 5]],
         "domain": "Test", "sub_category": "Entity Perception", "duration": 30},
        {"qid": 2, "video_uid": "absent", "question": "Which?", "answer": "a", "choices": ["a", "b", "c", "d", "e"],
         "right_answer": "A", "clue_intervals": [[0, 1]], "domain": "Test", "sub_category": "Text Perception",
         "duration": 30}]))
    (tmp_path / "exp.yaml").write_text(f"""
name: offline
backbone: {{type: torchscript, options: {{export: {export}}}}}
encoding: {{type: rekv_sliding_window, options: {{n_local: 60}}}}
retrieval: {{type: internal, options: {{retrieve_size: 4}}}}
benchmark: {{type: cgbench, options: {{annotations: {tmp_path / 'cg.json'}, video_extension: .avi}}}}
stream: {{fps: 0.5, max_new_tokens: 4}}
""")
    run = tmp_path / "results" / "offline"
    predictions = run / "predictions.jsonl"
    for attempt in range(2):  # the missing video is a fault: not closed, exit 1, asked again by each rerun
        r = svqa(svqa_bin, root, "run", str(tmp_path / "exp.yaml"), "--out", str(tmp_path / "results"))
        assert r.returncode == 1 and r.stderr.count("\n") == 1, r.stderr
        assert "1 questions not answered: their input could not be read (absent: " in r.stderr, r.stderr
        assert "rerun to ask them again" in r.stderr and "fault (asked again by the next run)" in r.stdout
        assert ("1 already answered" in r.stdout) == (attempt == 1), r.stdout  # the answer kept, the fault not
        recs = [json.loads(line) for line in predictions.read_text().splitlines()]
        assert [x["question_id"] for x in recs] == ["1", "2"]  # the fault once: taken out by the rerun
        recs = {x["question_id"]: x for x in recs}
        assert "error" not in recs["1"] and "fault" not in recs["1"]
        assert recs["1"]["time"] == 30.0 and recs["1"]["frames_encoded"] == 15  # the stream's end, every frame
        assert "absent.avi" in recs["2"]["error"] and recs["2"]["time"] is None  # no video, no end: null
        assert recs["2"]["fault"] == "input"
        assert not (run / "scores.json").exists() and not (run / "metrics.json").exists()
    r = svqa(svqa_bin, root, "score", "cgbench", str(tmp_path / "cg.json"), str(predictions),
             "--set", "video_extension=.avi")  # the file as it stands: the fault read as an error record
    assert r.returncode == 0, r.stderr
    assert "| **overall** | 2 |" in r.stdout and "1 errored" in r.stdout
    assert "retrieval recall" in r.stdout

    # The video appears: the rerun answers its question and closes the run.
    assert svqa(svqa_bin, root, "make-video", str(tmp_path / "absent.avi"), "--seconds", "30", "--fps", "2").returncode == 0
    r = svqa(svqa_bin, root, "run", str(tmp_path / "exp.yaml"), "--out", str(tmp_path / "results"))
    assert r.returncode == 0 and "1 already answered" in r.stdout, r.stderr
    recs = {x["question_id"]: x for x in map(json.loads, predictions.read_text().splitlines())}
    assert sorted(recs) == ["1", "2"] and not any("error" in x for x in recs.values())
    assert recs["2"]["time"] == 30.0
    assert json.loads((run / "metrics.json").read_text())["answered"] == 2


FIXTURES = __import__("pathlib").Path(__file__).resolve().parents[1] / "fixtures" / "benchmarks"
REPEATS = ": ids must be unique, or the second {} is never asked and is scored with the first one's answer"


def test_repeated_question_ids_are_errors_naming_both_records(svqa_bin, root):
    """The audit: accepted silently; the second question was never asked, yet scored with the first's answer."""
    cg = FIXTURES / "duplicate_qid.cgbench.json"
    r = svqa(svqa_bin, root, "benchmark", "inspect", "cgbench", str(cg))
    assert r.returncode == 1
    assert f'error: {cg}: [2].qid: question id "7" repeats the one at [0].qid' + REPEATS.format("question") in r.stdout
    streams = FIXTURES / "duplicate_ids.streams.json"
    r = svqa(svqa_bin, root, "benchmark", "inspect", "stream_list", str(streams))
    assert r.returncode == 1
    assert r.stderr == (f'svqa benchmark: error: {streams}: streams[0].questions[2].id: "q1" repeats '
                        f'streams[0].questions[0].id' + REPEATS.format("one") + "\n")


def test_a_run_on_repeated_ids_stops_before_answering(svqa_bin, root, tmp_path, tiny_export):
    import numpy as np
    from experiment_files import write_experiment

    np.save(tmp_path / "clip.npy", np.zeros((4, 48, 48, 3), np.uint8))
    (tmp_path / "streams.json").write_text((FIXTURES / "duplicate_ids.streams.json").read_text())
    write_experiment(tmp_path / "exp.yaml", "dup", tiny_export("llava_onevision"), tmp_path / "streams.json")
    r = svqa(svqa_bin, root, "run", str(tmp_path / "exp.yaml"), "--out", str(tmp_path / "out"))
    assert r.returncode == 1
    assert r.stderr == (f'svqa run: error: {tmp_path / "streams.json"}: streams[0].questions[2].id: "q1" repeats '
                        f'streams[0].questions[0].id' + REPEATS.format("one") + "\n")
    assert not (tmp_path / "out" / "dup" / "predictions.jsonl").exists()


def test_a_time_stamp_past_any_video_is_an_error_not_a_negative_time(svqa_bin, root):
    path = FIXTURES / "huge_time_stamp.streamingbench.json"
    r = svqa(svqa_bin, root, "benchmark", "inspect", "streamingbench", str(path))
    assert r.returncode == 1
    assert (f'error: {path}: [0].questions[0].time_stamp: expected H:MM:SS or MM:SS (below 10^7 s), got '
            '"99999999999999999999999:00"') in r.stdout
    assert "-2562047788015215" not in r.stdout  # the audit: the stamp overflowed to a negative time


def test_score_refuses_a_directory_and_a_fractional_question_id(svqa_bin, root, samples, tmp_path):
    cg = str(samples / "cgbench_mini.sample.json")
    r = svqa(svqa_bin, root, "score", "cgbench", cg, str(tmp_path))  # the audit: exit 0, 0 predictions
    assert (r.returncode, r.stderr) == (1, f"svqa score: error: {tmp_path}: is a directory, expected a JSON Lines file\n")
    preds = write_jsonl(tmp_path / "p.jsonl", [{"question_id": 1.5, "prediction": "A"}])
    r = svqa(svqa_bin, root, "score", "cgbench", cg, str(preds))
    assert (r.returncode, r.stderr) == (1, f"svqa score: error: {preds}:1: question_id: expected a string or an integer, "
                                           "got 1.5\n")


def test_check_lists_present_missing_and_unreadable_videos(svqa_bin, root, tmp_path):
    # Real StreamingBench records (questions_real.json: sample_348, sample_242, sample_132), copied from the
    # shared samples so the test stands alone; their videos synthesized: one present, one corrupt, one missing.
    sample = root / "tests" / "fixtures" / "benchmarks" / "streamingbench_questions_real.sample.json"
    videos = tmp_path / "videos"
    videos.mkdir()
    r = svqa(svqa_bin, root, "make-video", str(tmp_path / "clip.avi"), "--seconds", "30", "--fps", "2")
    assert r.returncode == 0, r.stderr
    (tmp_path / "clip.avi").rename(videos / "sample_348_real.mp4")
    (videos / "sample_242_real.mp4").write_bytes(b"\x00not a video" * 64)
    r = svqa(svqa_bin, root, "benchmark", "check", "streamingbench", str(sample), "--video-root", str(videos))
    assert r.returncode == 1, r.stderr
    # 2 fps, every 4th frame at 0.5 fps: 15 of the 60 frames.
    assert f"present: {videos}/sample_348_real.mp4: 30.0 s (0:00:30), 15 frames\n" in r.stdout
    assert f"missing: {videos}/sample_132_real.mp4\n" in r.stdout
    assert f"unreadable: {videos}/sample_242_real.mp4: " in r.stdout
    assert r.stdout.endswith("videos: 3 (1 present, 1 missing, 1 unreadable)\nduration: 30.0 s (0:00:30) (the videos "
                             "present)\nframes at 0.5 fps: 15 (what a run encodes of them)\n")
    (videos / "sample_242_real.mp4").unlink()
    (videos / "sample_348_real.mp4").rename(videos / "sample_242_real.mp4")
    (videos / "sample_132_real.mp4").symlink_to(videos / "sample_242_real.mp4")
    (videos / "sample_348_real.mp4").symlink_to(videos / "sample_242_real.mp4")
    r = svqa(svqa_bin, root, "benchmark", "check", "streamingbench", str(sample), "--video-root", str(videos), "--fps", "1")
    assert r.returncode == 0, r.stderr
    assert "videos: 3 (3 present, 0 missing, 0 unreadable)\nduration: 90.0 s (0:01:30)" in r.stdout
    assert "frames at 1.0 fps: 90 (what a run encodes of them)\n" in r.stdout
