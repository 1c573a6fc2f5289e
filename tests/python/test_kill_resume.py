"""kill -9 at chosen records, then a rerun: the records equal an uninterrupted run's (timings aside)
for every encoding strategy and both protocols. A question answered before the kill is skipped on
resume but must change the stream's memory as it did then (StreamKV closes its open segment, MuKV
drops its leftovers with `segment_leftovers: drop`): 10 trials each, killed after record 1, 2, ..., 10
of 11 (SVQA_KILL_AFTER_RECORDS, not a timer)."""

import json
import signal

import pytest

from resume_runs import PROTOCOLS, STRATEGIES, records, run, write_experiment

# 11 questions over a 50 s video at 0.5 fps: odd times, so MuKV's 4-frame segments and StreamKV's
# segments are open at most of them.
TIMES = [3, 7, 11, 13, 17, 21, 27, 31, 35, 41, 47]
TRIALS = range(1, len(TIMES))  # kill after record 1 ... 10


@pytest.fixture(scope="module")
def video(tmp_path_factory, svqa_bin):
    root = tmp_path_factory.mktemp("kill_resume")
    import subprocess

    subprocess.run([svqa_bin, "make-video", root / "video.avi", "--seconds", "50"], check=True, capture_output=True)
    questions = [{"id": f"q{t:02d}", "time": float(t), "question": "What color is the background?",
                  "options": ["red", "green", "blue"], "answer": "red"} for t in TIMES]
    (root / "streams.json").write_text(json.dumps({"streams": [{"id": "s", "video": "video.avi", "questions": questions}]}))
    return root


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_killed_at_any_record_a_rerun_gives_the_uninterrupted_records(video, svqa_bin, tiny_export, strategy, protocol):
    export = tiny_export(STRATEGIES[strategy][2])
    root = video / f"{strategy}-{protocol}"
    root.mkdir()
    exp = write_experiment(root / "exp.yaml", "run", strategy, export, video / "streams.json", root / "unused", protocol)
    r = run(svqa_bin, exp, out=root / "whole")
    assert r.returncode == 0, r.stdout + r.stderr
    whole = records(root / "whole" / "run")
    assert len(whole) == len(TIMES) and not any("error" in x for x in whole.values())

    differing = []
    for kill_after in TRIALS:
        out = root / f"killed_after_{kill_after}"
        r = run(svqa_bin, exp, out=out, kill_after=kill_after)
        assert r.returncode == -signal.SIGKILL, r.stdout + r.stderr
        assert len(records(out / "run")) == kill_after
        r = run(svqa_bin, exp, out=out)
        assert r.returncode == 0, r.stdout + r.stderr
        assert f"({kill_after} already answered: resuming)" in r.stdout
        resumed = records(out / "run")
        assert sorted(resumed) == sorted(whole)
        differing += [(kill_after, q) for q in whole if resumed[q] != whole[q]]
    assert not differing, f"(killed after record, question) whose record differs from the uninterrupted run's: {differing}"
