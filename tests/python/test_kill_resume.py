"""kill -9 at chosen records, then a rerun: the records equal an uninterrupted run's (timings aside)
for every encoding strategy and both protocols. A question answered before the kill is skipped on
resume but must change the stream's memory as it did then (StreamKV closes its open segment, MuKV
drops its leftovers with `segment_leftovers: drop`).

10 kill trials per strategy and protocol, at every point of the run: the run is killed after record
1 (SVQA_KILL_AFTER_RECORDS, not a timer), the rerun resumes after record 1 and is killed after its
first new record (record 2 of the run), and so on to record 10; a last rerun answers record 11. Every
record after the first is thus made by a process that resumed just before it, the point where a
resume goes wrong, and every record is compared with the uninterrupted run's."""

import json
import signal
import subprocess

import pytest

from resume_runs import PROTOCOLS, STRATEGIES, UNSPILLED, records, run, write_experiment

# 11 questions over a 26 s video at 0.5 fps, 1 to 3 frames apart: MuKV's 4-frame segments and
# StreamKV's segments are open at most of them.
TIMES = [3, 5, 7, 11, 13, 15, 17, 19, 21, 23, 25]
TRIALS = len(TIMES) - 1


@pytest.fixture(scope="module")
def video(tmp_path_factory, svqa_bin):
    root = tmp_path_factory.mktemp("kill_resume")
    subprocess.run([svqa_bin, "make-video", root / "video.avi", "--seconds", "26"], check=True, capture_output=True)
    questions = [{"id": f"q{t:02d}", "time": float(t), "question": "What color is the background?",
                  "options": ["red", "green", "blue"], "answer": "red"} for t in TIMES]
    (root / "streams.json").write_text(json.dumps({"streams": [{"id": "s", "video": "video.avi", "questions": questions}]}))
    return root


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("strategy", list(STRATEGIES) + list(UNSPILLED))
def test_killed_at_any_record_a_rerun_gives_the_uninterrupted_records(video, svqa_bin, tiny_export, strategy, protocol):
    export = tiny_export({**STRATEGIES, **UNSPILLED}[strategy][2])
    root = video / f"{strategy}-{protocol}"
    root.mkdir()
    exp = write_experiment(root / "exp.yaml", "run", strategy, export, video / "streams.json", root / "unused", protocol)
    r = run(svqa_bin, exp, out=root / "whole")
    assert r.returncode == 0, r.stdout + r.stderr
    whole = records(root / "whole" / "run")
    assert len(whole) == len(TIMES) and not any("error" in x for x in whole.values())

    out = root / "killed"
    for kill in range(1, TRIALS + 1):  # trial `kill`: the run dies right after record `kill`
        r = run(svqa_bin, exp, out=out, kill_after=1)
        assert r.returncode == -signal.SIGKILL, r.stdout + r.stderr
        assert len(records(out / "run")) == kill
    r = run(svqa_bin, exp, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"({TRIALS} already answered: resuming)" in r.stdout
    resumed = records(out / "run")
    assert sorted(resumed) == sorted(whole)
    differing = [q for q in whole if resumed[q] != whole[q]]
    assert not differing, f"questions whose record differs from the uninterrupted run's: {differing}"
