"""Stream shards (`svqa run --shard i/N`, `svqa merge`) and Slurm (`svqa submit`) end to end, on a
tiny random export and a stream_list benchmark whose streams share one short video.

The Slurm tests submit to a real single-node cluster (scripts/slurm_local.sh: Debian's slurmctld,
slurmd and munge): the one scripts/test.sh started (SLURM_CONF set), else one started here and
stopped at the end. Where it cannot start they skip, saying why (pytest -rs prints it)."""

import json
import os
import re
import signal
import subprocess
import threading
import time

import pytest

from slurm_cluster import local_cluster, wait_for, wait_for_jobs

MANY = 20  # streams of the partition test


def write_benchmark(folder, svqa, streams):
    """`streams` streams on one 8 s video, each with one question (times vary, so do encodings)."""
    folder.mkdir(parents=True, exist_ok=True)
    video = folder / "clip.avi"
    if not video.exists():
        subprocess.run([svqa, "make-video", video, "--seconds", "8"], check=True, capture_output=True)
    entries = [{"id": f"s{i:02d}", "video": "clip.avi",
                "questions": [{"id": f"s{i:02d}q", "time": 2.0 + (i % 3) * 2, "question": "What color is it?",
                               "options": ["red", "green"], "answer": "green"}]} for i in range(streams)]
    annotations = folder / f"streams{streams}.json"
    annotations.write_text(json.dumps({"streams": entries}))
    return annotations


def write_experiment(path, export, annotations, results, grid=False, slurm=""):
    grid_section = "grid: {axes: {retrieval.options.retrieve_size: [1, 2]}}\n" if grid else ""
    path.write_text(f"""
name: {path.stem}
backbone: {{type: torchscript, options: {{export: {export}}}}}
encoding: {{type: rekv_sliding_window, options: {{n_local: 30}}}}
retrieval: {{type: internal, options: {{retrieve_size: 2}}}}
benchmark: {{type: stream_list, options: {{annotations: {annotations}}}}}
stream: {{fps: 0.5, chunk_frames: 4, max_new_tokens: 3}}
runtime: {{threads: 1}}
output: {{dir: {results}}}
{grid_section}{slurm}""")
    return path


def svqa_ok(svqa, *args, env=None):
    r = subprocess.run([svqa, *map(str, args)], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, f"svqa {' '.join(map(str, args))}: {r.stderr}{r.stdout}"
    return r


def read_records(path):
    """(stream, question) → record without its timings; a question recorded twice fails."""
    out = {}
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        rec.pop("timing", None)
        key = (rec["stream"], rec["question_id"])
        assert key not in out, f"{path}: {key} recorded twice"
        out[key] = rec
    return out


def run_dirs(grid_dir):
    return sorted(p for p in grid_dir.iterdir() if (p / "config.yaml").exists())


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, svqa_bin, tiny_export):
    root = tmp_path_factory.mktemp("slurm")
    return {"root": root, "export": tiny_export("llava_onevision"),
            "many": write_benchmark(root / "bench", svqa_bin, MANY),
            "few": write_benchmark(root / "bench", svqa_bin, 4)}


@pytest.fixture(scope="module")
def unsharded(tiny, svqa_bin):
    """The 20-stream experiment run whole: what every sharding must reproduce."""
    exp = write_experiment(tiny["root"] / "many.yaml", tiny["export"], tiny["many"], tiny["root"] / "whole")
    svqa_ok(svqa_bin, "run", exp)
    return exp, tiny["root"] / "whole" / "many"


@pytest.mark.parametrize("count", range(1, 8))
def test_stream_shards_partition_the_streams_and_merge_to_the_unsharded_run(tiny, svqa_bin, unsharded, count):
    exp, whole = unsharded
    out = tiny["root"] / f"shards{count}"
    for index in range(count):
        svqa_ok(svqa_bin, "run", exp, "--shard", f"{index}/{count}", "--out", out)
    run = out / "many"
    streams = [f"s{i:02d}" for i in range(MANY)]
    if count > 1:
        seen = []
        for index in range(count):
            mine = {stream for stream, _ in read_records(run / "shards" / f"{index}-of-{count}.jsonl")}
            assert mine == {s for i, s in enumerate(streams) if i % count == index}
            seen += sorted(mine)
        assert sorted(seen) == streams  # every stream once
    expected = whole / "predictions.jsonl"
    assert list(read_records(run / "predictions.jsonl")) == list(read_records(expected))  # the same order
    assert read_records(run / "predictions.jsonl") == read_records(expected)
    assert json.loads((run / "scores.json").read_text()) == json.loads((whole / "scores.json").read_text())


def test_a_missing_or_doubled_shard_is_refused_naming_it(tiny, svqa_bin, unsharded):
    exp, _ = unsharded
    out = tiny["root"] / "refusals"
    run = out / "many"
    for index in (0, 2):
        svqa_ok(svqa_bin, "run", exp, "--shard", f"{index}/3", "--out", out)
    assert not (run / "scores.json").exists()  # shard 1/3 never ran: nothing closed

    r = subprocess.run([svqa_bin, "merge", run], capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stderr.splitlines() == [f"svqa merge: {run}: shard 1/3 missing: {run}/shards/1-of-3.jsonl not found "
                                     "(run it: --shard 1/3)"]

    # A whole run over unmerged shards would answer their streams again; a shard with another config
    # would label its siblings' answers with it.
    r = subprocess.run([svqa_bin, "run", exp, "--out", out], capture_output=True, text=True)
    assert r.returncode == 1 and len(r.stderr.splitlines()) == 1 and "stream shards, not merged" in r.stderr
    r = subprocess.run([svqa_bin, "run", exp, "--shard", "1/3", "--out", out, "--set", "stream.max_new_tokens=2"],
                       capture_output=True, text=True)
    assert r.returncode == 1 and len(r.stderr.splitlines()) == 1
    assert "its answers were made with another config (stream.max_new_tokens" in r.stderr

    # Shards of another N would answer streams a second time.
    r = subprocess.run([svqa_bin, "run", exp, "--shard", "0/2", "--out", out], capture_output=True, text=True)
    assert r.returncode == 1
    assert len(r.stderr.splitlines()) == 1 and "shard 0/2: " in r.stderr and "3 stream shards" in r.stderr

    # A stream in two shards' files (shard 0's first record copied into shard 1's).
    first = (run / "shards" / "0-of-3.jsonl").read_text().splitlines()[0]
    svqa_ok(svqa_bin, "run", exp, "--shard", "1/3", "--out", out)  # the last shard: merges
    assert (run / "scores.json").exists()
    with open(run / "shards" / "1-of-3.jsonl", "a") as f:
        f.write(first + "\n")
    r = subprocess.run([svqa_bin, "merge", run], capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stderr.splitlines() == [f"svqa merge: {run}: shard 1/3: {run}/shards/1-of-3.jsonl holds stream s00, "
                                     "which is shard 0/3's: a stream given to two shards"]


# ---- every device of one machine: svqa run|grid --devices ----------------------------------------


def test_devices_run_one_stream_shard_each_and_merge_to_the_unsharded_run(tiny, svqa_bin, unsharded):
    exp, whole = unsharded
    out = tiny["root"] / "devices"
    r = svqa_ok(svqa_bin, "run", exp, "--devices", "cpu,cpu", "--out", out)
    run = out / "many"
    for index in range(2):  # the same shard files a Slurm array writes, each child's lines relayed with its tag
        mine = {stream for stream, _ in read_records(run / "shards" / f"{index}-of-2.jsonl")}
        assert mine == {f"s{i:02d}" for i in range(index, MANY, 2)}
        assert f"[shard {index}/2 cpu] stream shard {index}/2 done" in r.stdout
    assert read_records(run / "predictions.jsonl") == read_records(whole / "predictions.jsonl")
    assert json.loads((run / "scores.json").read_text()) == json.loads((whole / "scores.json").read_text())


def test_devices_a_killed_child_resumes_on_the_rerun(tiny, svqa_bin, unsharded):
    """Each child stops itself (SIGSTOP) after its first record; child 1 is then killed (SIGKILL), child
    0 let go. The parent says which shard failed; the same command again finishes it from its records."""
    exp, whole = unsharded
    out = tiny["root"] / "devices_killed"
    run = out / "many"
    parent = subprocess.Popen([svqa_bin, "run", exp, "--devices", "cpu,cpu", "--out", out], text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env=dict(os.environ, SVQA_STOP_AFTER_RECORDS="1"))
    pids = {}

    def both_stopped():
        for k in range(2):
            pids[k] = pids.get(k) or stopped_pid(run / "shards" / f"{k}-of-2.lock")
        return all(pids.values())

    wait_for(both_stopped, "both children stopped after their first record")
    os.kill(pids[1], signal.SIGKILL)
    os.kill(pids[0], signal.SIGCONT)
    stdout, stderr = parent.communicate(timeout=600)
    assert parent.returncode == 1, stdout + stderr
    assert stderr.splitlines() == ["svqa run: 1 of 2 stream shards failed (rerun the same command: each resumes "
                                   "from its records):", "  shard 1/2 on cpu: killed by signal 9"]
    assert "[shard 0/2 cpu] stream shard 0/2 done" in stdout and not (run / "predictions.jsonl").exists()
    before = (run / "shards" / "1-of-2.jsonl").read_text()
    assert len(before.splitlines()) == 1

    svqa_ok(svqa_bin, "run", exp, "--devices", "cpu,cpu", "--out", out)
    assert (run / "shards" / "1-of-2.jsonl").read_text().startswith(before)  # its record kept, not answered again
    assert read_records(run / "predictions.jsonl") == read_records(whole / "predictions.jsonl")


def test_devices_grid_equals_the_local_grid_and_bad_devices_are_one_line(tiny, svqa_bin):
    exp = write_experiment(tiny["root"] / "devgrid.yaml", tiny["export"], tiny["few"], tiny["root"] / "devgrid_local",
                           grid=True)
    svqa_ok(svqa_bin, "grid", exp)
    out = tiny["root"] / "devgrid_devices"
    svqa_ok(svqa_bin, "grid", exp, "--devices", "cpu,cpu", "--out", out)
    local, devices = run_dirs(tiny["root"] / "devgrid_local" / "devgrid"), run_dirs(out / "devgrid")
    assert [p.name for p in local] == [p.name for p in devices] and len(local) == 2
    for mine, theirs in zip(devices, local):
        assert (mine / "shards" / "1-of-2.jsonl").exists()
        assert read_records(mine / "predictions.jsonl") == read_records(theirs / "predictions.jsonl")
    for args, why in ((["--devices", "cpu,0"], "every device of one kind"),
                      (["--devices", "gpu0"], "expected cpu, a CUDA index (0) or cuda:N"),
                      (["--devices", "cpu", "--shard", "0/2"], "no --shard"),
                      (["--devices", "cpu", "--set", "runtime.device=cuda"], "it must be cpu")):
        r = subprocess.run([svqa_bin, "grid", exp, "--out", tiny["root"] / "refused", *args], capture_output=True, text=True)
        assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and why in r.stderr, (args, r.stderr)
    assert not (tiny["root"] / "refused").exists()


def test_merge_leaves_out_a_record_of_a_question_the_benchmark_does_not_ask(tiny, svqa_bin):
    exp = write_experiment(tiny["root"] / "few.yaml", tiny["export"], tiny["few"], tiny["root"] / "extra")
    for index in range(2):
        svqa_ok(svqa_bin, "run", exp, "--shard", f"{index}/2")
    run = tiny["root"] / "extra" / "few"
    shard = run / "shards" / "0-of-2.jsonl"
    ghost = json.loads(shard.read_text().splitlines()[0])
    ghost["question_id"] = "ghost"  # answered, then taken out of the annotations
    with open(shard, "a") as f:
        f.write(json.dumps(ghost) + "\n")
    r = svqa_ok(svqa_bin, "merge", run)
    assert "1 records of questions the benchmark does not ask left out (first: s00/ghost)" in r.stdout, r.stdout
    assert sorted(read_records(run / "predictions.jsonl")) == [(f"s{i:02d}", f"s{i:02d}q") for i in range(4)]
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["answered"] + metrics["errored"] == metrics["questions"] == 4


def test_a_shard_count_above_the_streams_is_refused_in_one_short_line(tiny, svqa_bin):
    exp = write_experiment(tiny["root"] / "huge.yaml", tiny["export"], tiny["few"], tiny["root"] / "huge")
    r = subprocess.run([svqa_bin, "run", exp, "--shard", "3/1000000"], capture_output=True, text=True, timeout=600)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == ("svqa run: error: --shard 3/1000000: the run has 4 streams, so at most 4 stream shards "
                        "(each takes the streams whose index % N == i)\n")
    assert not (tiny["root"] / "huge").exists()  # nothing written
    svqa_ok(svqa_bin, "run", exp, "--shard", "3/4")  # as many shards as streams: each takes one


PROGRESS_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d encoding live: \d+/\d+ frames", re.M)


def test_a_log_that_is_not_a_terminal_shows_progress_while_the_stream_is_paused(tiny, svqa_bin):
    """`svqa run ... > log` (a Slurm or nohup log): a timestamped progress line is in the log while the
    stream's frames are still to come (its video a FIFO this test feeds half-way and holds), not at the end."""
    folder = tiny["root"] / "paused"
    folder.mkdir()
    clip = folder / "clip.avi"
    subprocess.run([svqa_bin, "make-video", clip, "--seconds", "40"], check=True, capture_output=True)
    data = clip.read_bytes()
    os.mkfifo(folder / "live.avi")
    (folder / "live.json").write_text(json.dumps({"streams": [{
        "id": "live", "video": "live.avi", "questions": [{"id": "q", "time": 38.0, "question": "What color is it?",
                                                          "options": ["red", "green"], "answer": "green"}]}]}))
    exp = write_experiment(folder / "paused.yaml", tiny["export"], folder / "live.json", folder / "results")
    released = threading.Event()

    def feed():
        with open(folder / "live.avi", "wb") as video:  # opens once svqa opens the video
            video.write(data[:len(data) // 2])
            video.flush()
            released.wait(600)  # the stream paused half-way
            video.write(data[len(data) // 2:])

    log = folder / "log"
    with open(log, "w") as out:
        proc = subprocess.Popen([svqa_bin, "run", exp], stdout=out, stderr=subprocess.STDOUT)
    feeder = threading.Thread(target=feed)
    feeder.start()
    try:
        # A bound for a stuck run, not a timing: the model loads, then the line comes while nothing moves.
        wait_for(lambda: PROGRESS_LINE.search(log.read_text()) or proc.poll() is not None, "a progress line", 300)
        assert PROGRESS_LINE.search(log.read_text()) and proc.poll() is None, log.read_text()
    finally:
        released.set()
        feeder.join(600)
        proc.wait(600)
    assert proc.returncode == 0, log.read_text()
    assert "live/q @38.0 s" in log.read_text()


# ---- Slurm ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cluster(root):
    with local_cluster(root) as conf:
        yield conf


SLURM = "slurm: {stream_shards: 2, cpus_per_task: 1, time: '00:20:00'}\n"


def test_dry_run_prints_a_script_sbatch_accepts(tiny, svqa_bin, cluster):
    exp = write_experiment(tiny["root"] / "dry.yaml", tiny["export"], tiny["few"], tiny["root"] / "dry", grid=True,
                           slurm="slurm: {stream_shards: 2, cpus_per_task: 1, mem: 500M, time: '00:10:00', "
                                 "max_running: 2, sbatch: ['--comment=svqa-test']}\n")
    r = svqa_ok(svqa_bin, "submit", exp, "--dry-run", "--out", tiny["root"] / "dry out #1")
    script = r.stdout
    assert "#SBATCH --array=0-3%2\n" in script and "--stream-shards 2" in script
    logs = f'{tiny["root"]}/dry out #1/dry/slurm/logs'
    assert f'#SBATCH --output="{logs}/%A_%a.out"\n' in script and f'#SBATCH --error="{logs}/%A_%a.err"\n' in script
    assert not (tiny["root"] / "dry").exists() and not (tiny["root"] / "dry out #1").exists()  # nothing written
    test = subprocess.run(["sbatch", "--test-only"], input=script, capture_output=True, text=True)
    assert test.returncode == 0, test.stderr
    assert "to start at" in test.stderr


def test_gpus_are_asked_as_gres(tiny, svqa_bin):
    exp = write_experiment(tiny["root"] / "gpu.yaml", tiny["export"], tiny["few"], tiny["root"] / "gpu",
                           slurm="slurm: {gpus: 2, gpu_type: a100, partition: gpu}\n")
    script = svqa_ok(svqa_bin, "submit", exp, "--dry-run").stdout
    assert "#SBATCH --gres=gpu:a100:2\n" in script and "#SBATCH --partition=gpu\n" in script
    bad = write_experiment(tiny["root"] / "bad.yaml", tiny["export"], tiny["few"], tiny["root"] / "bad",
                           slurm="slurm: {sbatch: ['mem=4G']}\n")
    r = subprocess.run([svqa_bin, "submit", bad, "--dry-run"], capture_output=True, text=True)
    assert r.returncode == 2 and "slurm.sbatch" in r.stderr and len(r.stderr.splitlines()) == 1
    # A path Slurm cannot express in --output (a backslash turns its %A/%a patterns off): one line, nothing written.
    r = subprocess.run([svqa_bin, "submit", exp, "--dry-run", "--out", tiny["root"] / "back\\slash"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "a backslash in a Slurm log path" in r.stderr


def test_the_slurm_section_is_not_part_of_a_runs_folder(tiny, svqa_bin):
    exp = write_experiment(tiny["root"] / "where.yaml", tiny["export"], tiny["few"], tiny["root"] / "where",
                           grid=True, slurm=SLURM)
    listed = [svqa_ok(svqa_bin, "grid", exp, "--list", *extra).stdout
              for extra in ([], ["--set", "slurm.time=2-00:00:00", "--set", "slurm.partition=long"])]
    assert listed[0] == listed[1] and "where__retrieve_size=1-" in listed[0]


def test_a_grid_submitted_to_slurm_equals_the_local_grid(tiny, svqa_bin, cluster):
    exp = write_experiment(tiny["root"] / "grid.yaml", tiny["export"], tiny["few"], tiny["root"] / "local",
                           grid=True, slurm=SLURM)
    svqa_ok(svqa_bin, "grid", exp)
    out = tiny["root"] / "cluster out #50%"  # a blank, a '#' and a '%' in every #SBATCH --output and --error
    submitted = svqa_ok(svqa_bin, "submit", exp, "--out", out).stdout
    assert "4 tasks: 2 runs x 2 stream shards" in submitted
    status = wait_for_jobs(svqa_bin, exp, out)
    assert status.returncode == 0, status.stdout + status.stderr
    assert "4 done, 0 running, 0 pending, 0 failed" in status.stdout

    local, remote = run_dirs(tiny["root"] / "local" / "grid"), run_dirs(out / "grid")
    assert [p.name for p in local] == [p.name for p in remote] and len(local) == 2
    for mine, theirs in zip(remote, local):
        assert read_records(mine / "predictions.jsonl") == read_records(theirs / "predictions.jsonl")
        assert json.loads((mine / "scores.json").read_text()) == json.loads((theirs / "scores.json").read_text())
    assert (out / "grid" / "report" / "report.md").exists()  # written by the dependent job
    merge_logs = list((out / "grid" / "slurm" / "logs").glob("merge_*.out"))
    assert len(merge_logs) == 1 and "merged 2 stream shards" in merge_logs[0].read_text()
    assert len(list((out / "grid" / "slurm" / "logs").glob("*_*.err"))) == 5  # stderr apart, for --status


def fake_slurm(folder, states):
    """squeue printing `states` ("JOB|STATE" lines) and an sacct without accounting, first on PATH:
    --status read without a cluster."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "squeue").write_text("#!/bin/sh\nprintf '%s\\n' " + " ".join(f"'{s}'" for s in states) + "\n")
    (folder / "sacct").write_text("#!/bin/sh\necho 'sacct: error: Slurm accounting storage is disabled' >&2\nexit 1\n")
    for tool in ("squeue", "sacct"):
        (folder / tool).chmod(0o755)
    return dict(os.environ, PATH=f"{folder}{os.pathsep}{os.environ['PATH']}")


def test_status_quotes_the_failure_not_a_later_success(tiny, svqa_bin):
    """A merge job that failed on one run and merged another: its stdout ends with the other run's
    success, its stderr holds the failure, which --status quotes (and a task's Slurm error line)."""
    exp = write_experiment(tiny["root"] / "quote.yaml", tiny["export"], tiny["few"], tiny["root"] / "quote",
                           grid=True, slurm=SLURM)
    for task in (0, 2, 3):  # run 0's stream shard 1 (task 1) never finished; run 1 did and merged
        svqa_ok(svqa_bin, "grid", exp, "--stream-shards", "2", "--shard", f"{task}/4")
    grid = tiny["root"] / "quote" / "quote"
    logs = grid / "slurm" / "logs"
    logs.mkdir(parents=True)
    (grid / "slurm" / "submitted.json").write_text(json.dumps(
        {"experiment": str(exp), "array_job": "70", "merge_job": "71", "tasks": 4, "runs": 2, "stream_shards": 2}))
    with open(logs / "merge_71.out", "w") as out, open(logs / "merge_71.err", "w") as err:  # as the merge job
        merged = subprocess.run([svqa_bin, "merge", exp], stdout=out, stderr=err)
    assert merged.returncode == 1 and "merged 2 stream shards" in (logs / "merge_71.out").read_text().splitlines()[-1]
    (logs / "70_1.out").write_text("== run 1/2: quote__retrieve_size=1 (stream shard 1/2)\n")
    (logs / "70_1.err").write_text("slurmstepd: error: *** JOB 73 ON node CANCELLED AT 2026-01-01T00:00:00 ***\n")
    env = fake_slurm(tiny["root"] / "fake_slurm",
                     ["70_0|COMPLETED", "70_1|CANCELLED", "70_2|COMPLETED", "70_3|COMPLETED", "71|FAILED"])
    r = subprocess.run([svqa_bin, "submit", exp, "--status"], capture_output=True, text=True, env=env)
    assert r.returncode == 1, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert "3 done, 0 running, 0 pending, 1 failed" in lines[0]
    assert lines[1].endswith("(stream shard 1/2): CANCELLED: slurmstepd: error: *** JOB 73 ON node CANCELLED AT "
                             "2026-01-01T00:00:00 ***")
    assert lines[2].startswith("merge job 71 (afterany:70): FAILED: svqa merge: ")
    assert "shard 1/2 missing" in lines[2] and "merged" not in lines[2]


def stopped_pid(lock):
    """The pid a shard's lock file names ("pid 123 on host since ..."), once that process is stopped."""
    match = re.match(r"pid (\d+) on ", lock.read_text() if lock.exists() else "")
    try:
        stat = open(f"/proc/{match[1]}/stat").read() if match else ""
    except FileNotFoundError:  # ended
        return None
    return int(match[1]) if stat and stat.rsplit(")", 1)[1].split()[0] == "T" else None


def test_a_cancelled_task_resubmitted_resumes(tiny, svqa_bin, cluster):
    """Each task stops itself (SIGSTOP) right after its first record. The first task seen stopped
    there is cancelled (scancel --signal=KILL of its array element: it never runs again), the other
    let go; whether they run side by side or one after the other. A resubmission then finishes the
    cancelled task from its records."""
    exp = write_experiment(tiny["root"] / "cancel.yaml", tiny["export"], tiny["few"], tiny["root"] / "cancel",
                           slurm=SLURM)
    out = tiny["root"] / "cancel"
    svqa_ok(svqa_bin, "submit", exp, env=dict(os.environ, SVQA_STOP_AFTER_RECORDS="1"))
    array = json.loads((out / "cancel" / "slurm" / "submitted.json").read_text())["array_job"]
    run = wait_for_path(out / "cancel", "cancel-*")
    acted = {}  # task → "cancelled" | "continued"

    def act_on_stopped_tasks():
        for k in range(2):
            pid = None if k in acted else stopped_pid(run / "shards" / f"{k}-of-2.lock")
            if pid is None:
                continue
            if "cancelled" not in acted.values():
                acted[k] = "cancelled"
                subprocess.run(["scancel", "--signal=KILL", f"{array}_{k}"], check=True)
            else:
                acted[k] = "continued"
                os.kill(pid, signal.SIGCONT)
        return len(acted) == 2

    wait_for(act_on_stopped_tasks, "both tasks stopped after their first record")
    cancelled = next(k for k, what in acted.items() if what == "cancelled")
    records = run / "shards" / f"{cancelled}-of-2.jsonl"
    before = records.read_text()
    assert len(before.splitlines()) == 1
    status = wait_for_jobs(svqa_bin, exp, None)
    assert status.returncode == 1
    assert "1 done, 0 running, 0 pending, 1 failed" in status.stdout, status.stdout
    assert f"task {cancelled} cancel (stream shard {cancelled}/2): CANCELLED: " in status.stdout
    assert f"shard {cancelled}/2 incomplete" in status.stdout  # the merge job's line: it ran after the cancel (afterany)

    svqa_ok(svqa_bin, "submit", exp)  # without the stop hook
    status = wait_for_jobs(svqa_bin, exp, None)
    assert status.returncode == 0, status.stdout
    assert records.read_text().startswith(before)  # resumed: the record made before the cancel kept
    assert len(read_records(records)) == 2  # and its question not answered again (read_records checks)
    merged = read_records(run / "predictions.jsonl")  # each question once (read_records checks)
    assert sorted(merged) == [(f"s{i:02d}", f"s{i:02d}q") for i in range(4)]


def wait_for_path(folder, pattern):
    wait_for(lambda: any(folder.glob(pattern)), f"{folder}/{pattern}")
    return next(folder.glob(pattern))
