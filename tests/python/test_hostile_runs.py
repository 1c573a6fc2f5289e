"""`svqa run` against hostile settings (issue 26): a device this LibTorch lacks is one line naming
the key (not the TorchScript file); temporaries a killed writer left in the run folder are removed
at the next run's start, a live process's never."""

import json
import os
import subprocess

import pytest

from experiment_files import write_experiment


def dead_pid():
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


@pytest.fixture(scope="module")
def setup(tmp_path_factory, svqa_bin, tiny_export):
    work = tmp_path_factory.mktemp("hostile_runs")
    assert subprocess.run([svqa_bin, "make-video", work / "video.avi", "--seconds", "4"], capture_output=True).returncode == 0
    questions = [{"id": "q0", "time": 3.0, "question": "What color is the background?"}]
    (work / "streams.json").write_text(json.dumps({"streams": [{"id": "s", "video": "video.avi", "questions": questions}]}))
    return work, tiny_export("llava_onevision")


def test_cuda_on_a_cpu_build_names_the_device_not_the_model_file(setup, svqa_bin):
    work, export = setup
    exp = write_experiment(work / "cuda.yaml", "cuda", export, work / "streams.json")
    r = subprocess.run([svqa_bin, "run", exp, "--out", work / "results", "--set", "runtime.device=cuda"],
                       capture_output=True, text=True, timeout=300)
    if r.returncode == 0:
        pytest.skip("this LibTorch has CUDA and a GPU")
    assert r.returncode == 1
    assert r.stderr == ("svqa run: error: runtime.device: cuda: this LibTorch was built without CUDA (a CPU-only "
                        "build); use cpu, or build svqa against a LibTorch with CUDA (docs/development.md)\n")


def test_a_run_removes_the_temporaries_of_killed_writers(setup, svqa_bin):
    work, export = setup
    exp = write_experiment(work / "tmp.yaml", "tmp_files", export, work / "streams.json")
    folder = work / "results" / "tmp_files"
    folder.mkdir(parents=True)
    dead, alive = dead_pid(), os.getpid()
    stale = [folder / f"{name}.tmp.{dead}" for name in ("config.yaml", "metrics.json", "scores.json")]
    live = folder / f"metrics.json.tmp.{alive}"
    for f in stale + [live]:
        f.write_text("half a file")
    r = subprocess.run([svqa_bin, "run", exp, "--out", work / "results"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert [f.name for f in stale if f.exists()] == []
    assert live.exists()
    assert (folder / "metrics.json").exists()
