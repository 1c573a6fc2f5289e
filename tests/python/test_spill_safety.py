"""The disk tier under a hostile machine: two runs sharing one stream.spill_dir, a spill block
overwritten, truncated or swapped for another run's between two questions, a full spill disk. Never
a question answered from a wrong block, never an error record for the machine's failure: the run
stops (rc 1, one line naming the file) and a rerun gives the records of an undisturbed run.
Runs are stopped at chosen records (SVQA_STOP_AFTER_RECORDS), not by timers."""

import json
import os
import shutil
import subprocess

import pytest

from resume_runs import STRATEGIES, Stopped, records, run, spill_subfolder, write_experiment

TIMES = [5, 11, 17, 23]
# Every block in memory brought back for every question, so a changed block is always read.
EVERY_BLOCK = "{type: internal, options: {retrieve_size: 64}}"


@pytest.fixture(scope="module")
def video(tmp_path_factory, svqa_bin):
    root = tmp_path_factory.mktemp("spill_safety")
    for name, phase in (("video.avi", 20), ("other.avi", 3)):  # other.avi: another colour every 3 s
        subprocess.run([svqa_bin, "make-video", root / name, "--seconds", "30", "--phase", str(phase)], check=True,
                       capture_output=True)
    for name, video in (("streams.json", "video.avi"), ("other.json", "other.avi")):
        questions = [{"id": f"q{t:02d}", "time": float(t), "question": "What color is the background?",
                      "options": ["red", "green", "blue"], "answer": "red"} for t in TIMES]
        (root / name).write_text(json.dumps({"streams": [{"id": "s", "video": video, "questions": questions}]}))
    return root


def experiment(root, video, export, strategy="rekv_sliding_window", annotations="streams.json", **kw):
    root.mkdir(parents=True, exist_ok=True)
    return write_experiment(root / "exp.yaml", "run", strategy, export, video / annotations, root / "unused", **kw)


def undisturbed(svqa_bin, exp, out):
    r = run(svqa_bin, exp, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    recs = records(out / "run")
    assert len(recs) == len(TIMES) and not any("error" in x for x in recs.values())
    return recs


def test_two_runs_sharing_a_spill_dir_never_touch_each_others_blocks(video, svqa_bin, tiny_export, tmp_path):
    export = tiny_export("llava_onevision")
    shared = tmp_path / "shared_spill"
    exp = experiment(tmp_path / "a", video, export, spill_dir=shared, retrieval=EVERY_BLOCK)
    other = experiment(tmp_path / "b", video, export, annotations="other.json", spill_dir=shared, retrieval=EVERY_BLOCK)
    want = undisturbed(svqa_bin, experiment(tmp_path / "alone", video, export, retrieval=EVERY_BLOCK), tmp_path / "alone_out")
    want_other = undisturbed(svqa_bin, experiment(tmp_path / "alone_b", video, export, annotations="other.json",
                                                  retrieval=EVERY_BLOCK), tmp_path / "alone_b_out")

    # A is stopped between two questions, its blocks on disk; B (same stream id "s", another video)
    # spills, reads and removes its own blocks in the same spill_dir; then A goes on.
    a = Stopped(svqa_bin, exp, after=1, log=tmp_path / "a.log", out=tmp_path / "out_a")
    mine = shared / spill_subfolder(tmp_path / "out_a" / "run") / "s"
    assert sorted(p.name for p in mine.iterdir()), "A has spilled blocks"
    b = run(svqa_bin, other, out=tmp_path / "out_b")
    rc, log = a.resume()
    assert b.returncode == 0 and rc == 0, b.stdout + b.stderr + log
    assert records(tmp_path / "out_a" / "run") == want
    assert records(tmp_path / "out_b" / "run") == want_other


def flip_bytes(path, _):
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(data)


def truncate(path, _):
    os.truncate(path, path.stat().st_size // 2)


def swap_in_another_runs(path, other_block):
    shutil.copyfile(other_block, path)


@pytest.mark.parametrize("change", [flip_bytes, truncate, swap_in_another_runs])
def test_a_changed_spill_block_is_never_answered_from(video, svqa_bin, tiny_export, tmp_path, change):
    export = tiny_export("llava_onevision")
    exp = experiment(tmp_path / "a", video, export, retrieval=EVERY_BLOCK)
    want = undisturbed(svqa_bin, exp, tmp_path / "alone")

    # Another run's last block (another video: its colour has changed by then; the same shapes),
    # taken while that run is stopped.
    other = Stopped(svqa_bin, experiment(tmp_path / "b", video, export, annotations="other.json", retrieval=EVERY_BLOCK),
                    after=1, log=tmp_path / "b.log", out=tmp_path / "out_b")
    foreign = tmp_path / "foreign_block.kv"
    theirs = sorted((tmp_path / "out_b" / "run" / "spill" / "s").iterdir(), key=lambda p: int(p.stem.split("_")[1]))
    shutil.copyfile(theirs[-1], foreign)
    other.proc.kill()
    other.proc.wait()

    a = Stopped(svqa_bin, exp, after=1, log=tmp_path / "a.log", out=tmp_path / "out")
    block = tmp_path / "out" / "run" / "spill" / "s" / "block_0.kv"
    size = block.stat().st_size
    if change is swap_in_another_runs:
        assert foreign.stat().st_size == size and foreign.read_bytes() != block.read_bytes()
    change(block, foreign)
    rc, log = a.resume()
    assert rc == 1, log
    last = log.strip().splitlines()[-1]
    assert str(block) in last and "spill file changed since it was written" in last, log
    assert "No such file" not in last
    kept = records(tmp_path / "out" / "run")
    assert list(kept) == ["q05"] and kept["q05"] == want["q05"]  # nothing answered from the changed block

    r = run(svqa_bin, exp, out=tmp_path / "out")  # the rerun re-encodes the stream and retries
    assert r.returncode == 0, r.stdout + r.stderr
    assert records(tmp_path / "out" / "run") == want


@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_a_spill_disk_that_fills_up_stops_the_run_and_a_rerun_retries(video, svqa_bin, tiny_export, tmp_path, strategy):
    """The disk fills up while the second question is prepared: the spill file of the last block made
    for it is /dev/full (writes fail with ENOSPC; for StreamKV that block comes from the segment it
    closes when the question comes). No error record, rc 1; the rerun, with room again, answers every
    question as an undisturbed run does."""
    export = tiny_export(STRATEGIES[strategy][2])
    spill = tmp_path / "spill"
    exp = experiment(tmp_path / "a", video, export, strategy=strategy, spill_dir=spill)
    want = undisturbed(svqa_bin, exp, tmp_path / "alone")
    first, second = (f"q{t:02d}" for t in TIMES[:2])
    full_from = want[second]["memory"]["blocks"] - 1  # block ids are dense from 0, each spilled when added
    assert want[first]["memory"]["blocks"] <= full_from
    if strategy == "streamkv_segments":
        assert want[second]["extra"]["streamkv_segments"]["flushed"] is not None
    run_dir = tmp_path / "out" / "run"
    run_dir.mkdir(parents=True)
    full = spill / spill_subfolder(run_dir) / "s"
    full.mkdir(parents=True)
    for i in range(full_from, full_from + 2000):
        (full / f"block_{i}.kv").symlink_to("/dev/full")
    r = run(svqa_bin, exp, out=tmp_path / "out")
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stderr.strip() == f"svqa run: error: {full / f'block_{full_from}.kv'}: cannot write spill file: " \
                               "No space left on device", r.stderr
    assert records(run_dir) == {first: want[first]}  # the answer before; no error record for the machine's failure
    shutil.rmtree(full)
    r = run(svqa_bin, exp, out=tmp_path / "out")
    assert r.returncode == 0, r.stdout + r.stderr
    assert records(run_dir) == want
