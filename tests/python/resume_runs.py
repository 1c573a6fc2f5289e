"""Helpers for tests that stop, kill and resume `svqa run` at chosen records (the runner's
SVQA_KILL_AFTER_RECORDS / SVQA_STOP_AFTER_RECORDS hooks: deterministic, no timers)."""

import json
import os
import signal
import subprocess

# One entry per encoding strategy (and MuKV's two leftover rules), each with the retrieval it is
# meant for and the tiny export it runs on; every block goes to disk (ram_budget_mb 0).
STRATEGIES = {
    "rekv_sliding_window": ("{type: rekv_sliding_window, options: {n_local: 30}}",
                            "{type: internal, options: {retrieve_size: 3}}", "llava_onevision"),
    "memstream_aks": ("{type: memstream_aks, options: {n_local: 30, mode: aks, compression: 2}}",
                      "{type: internal, options: {retrieve_size: 3}}", "llava_onevision"),
    "mukv_multigrain_drop": ("{type: mukv_multigrain, options: {segment_leftovers: drop}}",
                             "{type: mukv_semi_hierarchical}", "llava_onevision_196"),
    "mukv_multigrain_carry": ("{type: mukv_multigrain, options: {segment_leftovers: carry}}",
                              "{type: mukv_semi_hierarchical}", "llava_onevision_196"),
    "streamkv_segments": ("{type: streamkv_segments, options: {n_local: 30, min_segment_size: 2, max_segment_size: 6, "
                          "segment_theta: 0.999, keep_fraction: 0.5}}",
                          "{type: streamkv_layer_adaptive, options: {retrieve_size: 3, local_size: 2}}", "llava_onevision"),
}
# Strategies with no stream memory to spill (the question's own bank stays in RAM): in the kill trials,
# not in the disk tier's.
UNSPILLED = {
    "fresh_frames_uniform": ("{type: fresh_frames, options: {sampling: uniform, frames: 3}}",
                             "{type: full_context}", "llava_onevision"),
}
PROTOCOLS = ["streaming", "reencode_per_question"]


def write_experiment(path, name, strategy, export, annotations, results, protocol="streaming", spill_dir=None,
                     retrieval=None):
    encoding, default_retrieval, _ = {**STRATEGIES, **UNSPILLED}[strategy]
    retrieval = retrieval or default_retrieval
    spill = f", spill_dir: {spill_dir}" if spill_dir else ""
    path.write_text(f"""
name: {name}
backbone: {{type: torchscript, options: {{export: {export}}}}}
encoding: {encoding}
retrieval: {retrieval}
benchmark: {{type: stream_list, options: {{annotations: {annotations}}}}}
stream: {{fps: 0.5, chunk_frames: 4, max_new_tokens: 3, ram_budget_mb: 0, protocol: {protocol}{spill}}}
runtime: {{threads: 1}}
output: {{dir: {results}}}
""")
    return path


def run(svqa, experiment, out=None, kill_after=None, timeout=600):
    env = dict(os.environ)
    if kill_after is not None:
        env["SVQA_KILL_AFTER_RECORDS"] = str(kill_after)
    args = [svqa, "run", experiment] + (["--out", out] if out else [])
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout)


class Stopped:
    """`svqa run` stopped (SIGSTOP) by itself right after its `after`-th record: the test changes
    files, then resume() lets it finish and returns (returncode, stdout, stderr)."""

    def __init__(self, svqa, experiment, after, log, out=None):
        env = dict(os.environ, SVQA_STOP_AFTER_RECORDS=str(after))
        self.log = log
        with open(log, "w") as f:
            args = [svqa, "run", experiment] + (["--out", out] if out else [])
            self.proc = subprocess.Popen(args, env=env, stdout=f, stderr=subprocess.STDOUT)
        _, status = os.waitpid(self.proc.pid, os.WUNTRACED)  # returns once it has stopped (or ended)
        assert os.WIFSTOPPED(status), f"svqa ended before its record {after}: {open(log).read()}"

    def resume(self, timeout=600):
        os.kill(self.proc.pid, signal.SIGCONT)
        rc = self.proc.wait(timeout=timeout)
        return rc, open(self.log).read()


def spill_subfolder(run_dir):
    """Where a run's blocks go inside a shared stream.spill_dir (app/run/run_folder.h): named by the
    run folder's host, device and inode."""
    import socket

    st = os.stat(run_dir)
    return f"{socket.gethostname()}-{st.st_dev}-{st.st_ino}"


def records(results_dir):
    """predictions.jsonl by question id, each record without its timings (they differ run to run)."""
    out = {}
    for line in (results_dir / "predictions.jsonl").read_text().splitlines():
        rec = json.loads(line)
        rec.pop("timing", None)
        for section in rec.get("extra", {}).values():  # a strategy's own seconds (fresh_frames' vision_s, prefill_s)
            if isinstance(section, dict):
                for key in [k for k in section if k.endswith("_s")]:
                    del section[key]
        assert rec["question_id"] not in out, f"{rec['question_id']} recorded twice"
        out[rec["question_id"]] = rec
    return out
