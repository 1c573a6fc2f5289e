"""The local single-node Slurm cluster of the Slurm tests (scripts/slurm_local.sh), and waiting on
the jobs `svqa submit` made."""

import contextlib
import os
import subprocess
import time

import pytest


def _answers(conf):
    env = dict(os.environ, SLURM_CONF=conf)
    return subprocess.run(["sinfo", "-h", "-o", "%T"], env=env, capture_output=True, text=True).returncode == 0


@contextlib.contextmanager
def local_cluster(root):
    """Yields the slurm.conf of a running cluster: scripts/test.sh's (SLURM_CONF), else one started
    here and stopped after. Skips, saying why, where none can start."""
    conf = os.environ.get("SLURM_CONF")
    if conf and _answers(conf):
        yield conf
        return
    script = root / "scripts" / "slurm_local.sh"
    start = subprocess.run([script, "start"], capture_output=True, text=True)
    if start.returncode != 0:
        reason = (start.stderr.strip().splitlines() or [f"exit {start.returncode}"])[-1]
        pytest.skip(f"no Slurm cluster: {reason}")
    conf = start.stdout.strip().splitlines()[-1].split("=", 1)[1]
    os.environ["SLURM_CONF"] = conf  # svqa submit's sbatch and squeue read it
    try:
        yield conf
    finally:
        subprocess.run([script, "stop"], capture_output=True)
        os.environ.pop("SLURM_CONF", None)


def wait_for(condition, what, seconds=600):
    """Polls `condition` until true; fails after `seconds` (a bound for a stuck cluster, not a timing)."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"waited {seconds} s for {what}"
        time.sleep(0.2)


def wait_for_jobs(svqa, experiment, out, seconds=600):
    """`svqa submit EXP --status` once no task nor the merge job is pending or running (exit 3)."""
    args = [svqa, "submit", experiment, "--status"] + (["--out", out] if out else [])
    result = {}

    def settled():
        result["r"] = subprocess.run(args, capture_output=True, text=True)
        return result["r"].returncode != 3

    wait_for(settled, f"the jobs of {experiment}", seconds)
    return result["r"]
