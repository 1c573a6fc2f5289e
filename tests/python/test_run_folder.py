"""A results folder holds the answers of one config (the audit's items 1–4): a rerun with another
config is refused naming the first key that differs (config.yaml written only when new); two svqa on
one folder cannot both run (flock, naming the holder); names and grid values never lead outside
--out, manifest paths never outside the export; a grid goes on after a run that fails."""

import fcntl
import json
import os
import shutil
import socket
import subprocess
import sys
import time

import numpy as np
import pytest
import yaml
from backbone_reference import ROOT
from experiment_files import write_experiment


@pytest.fixture
def setup(tmp_path, tiny_export):
    np.save(tmp_path / "clip.npy", np.random.default_rng(0).integers(0, 256, (4, 48, 48, 3), dtype=np.uint8))
    (tmp_path / "streams.json").write_text(json.dumps({"streams": [
        {"id": "clip", "video": "clip.npy", "questions": [{"id": "q1", "time": 1.0, "question": "What?"}]}]}))
    write_experiment(tmp_path / "exp.yaml", "folder", tiny_export("llava_onevision"), tmp_path / "streams.json",
                     retrieval="{type: internal, options: {retrieve_size: 4}}")
    return tmp_path


def run(svqa_bin, root, *extra):
    return subprocess.run([svqa_bin, "run", root / "exp.yaml", "--out", root / "out", *extra], capture_output=True,
                          text=True)


def test_a_folder_with_answers_of_another_config_is_refused(svqa_bin, setup):
    r = run(svqa_bin, setup)
    assert r.returncode == 0, r.stderr
    folder = setup / "out" / "folder"
    config, predictions = folder / "config.yaml", folder / "predictions.jsonl"
    before = config.read_bytes(), config.stat().st_mtime_ns, predictions.read_bytes()

    # The audit: this "resumed" (all answered) and labelled answers made with 4 blocks as made with 2.
    r = run(svqa_bin, setup, "--set", "retrieval.options.retrieve_size=2")
    assert r.returncode == 1
    assert r.stderr == (f"svqa run: error: {config}: its answers were made with another config "
                        "(retrieval.options.retrieve_size: 4 there, 2 now); rerun with that config to resume, or use "
                        "another --out or name\n")
    # A rerun that would fail at run time no longer replaces the config either.
    # (A missing export is now refused before the folder is even opened: svqa validate's path check.)
    r = run(svqa_bin, setup, "--set", f"backbone.options.export={setup / 'nowhere'}")
    assert r.returncode == 2 and f"backbone.options.export: {setup / 'nowhere'}: no such directory" in r.stderr
    # The same config resumes, and config.yaml is not written again.
    r = run(svqa_bin, setup)
    assert r.returncode == 0 and "1 already answered" in r.stdout, r.stderr
    assert (config.read_bytes(), config.stat().st_mtime_ns, predictions.read_bytes()) == before

    # A folder with no answer yet takes the new config (a first run that failed before answering).
    predictions.unlink()
    r = run(svqa_bin, setup, "--set", "retrieval.options.retrieve_size=2")
    assert r.returncode == 0, r.stderr
    assert "retrieve_size: 2" in config.read_text()


def test_a_folder_in_use_is_refused_naming_the_holder(svqa_bin, setup):
    folder = setup / "out" / "folder"
    folder.mkdir(parents=True)
    with open(folder / "run.lock", "w") as held:  # another svqa's lock: flock is per process
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held.write("pid 4242 on node7 since 2025-01-01 10:00:00 (svqa run exp.yaml)\n")
        held.flush()
        r = run(svqa_bin, setup)
        assert r.returncode == 1
        assert r.stderr == (f"svqa run: error: {folder}: in use by another svqa (pid 4242 on node7 since 2025-01-01 "
                            "10:00:00 (svqa run exp.yaml)); wait for it to finish or use another --out\n")
        assert not (folder / "predictions.jsonl").exists() and not (folder / "config.yaml").exists()
    r = run(svqa_bin, setup)  # released: it runs, and the lock file names this run while it holds it
    assert r.returncode == 0, r.stderr
    assert f"(svqa run {setup / 'exp.yaml'})" in (folder / "run.lock").read_text()


@pytest.mark.parametrize("line", ["", "dead"])
def test_a_lock_file_not_naming_a_live_holder_gives_holder_unknown(svqa_bin, setup, line):
    """The holder writes its line just after it takes the lock: until then the file is empty or names an
    earlier holder, now ended. The second svqa must not name that one, and stops looking after two seconds."""
    folder = setup / "out" / "folder"
    folder.mkdir(parents=True)
    if line == "dead":
        earlier = subprocess.Popen(["true"])  # a process that has ended: the earlier holder
        earlier.wait()
        line = f"pid {earlier.pid} on {socket.gethostname()} since 2025-01-01 10:00:00 (svqa run old.yaml)\n"
    with open(folder / "run.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held.write(line)
        held.flush()
        r = run(svqa_bin, setup)
    assert r.returncode == 1
    assert r.stderr == (f"svqa run: error: {folder}: in use by another svqa (holder unknown); wait for it to finish "
                        "or use another --out\n")


def test_a_holder_line_written_after_the_lock_is_waited_for(svqa_bin, setup):
    """CI once caught the holder between its flock and its line. The line written 0.3 s after the second
    svqa starts always falls inside its two seconds of looking, whenever it first looks."""
    folder = setup / "out" / "folder"
    folder.mkdir(parents=True)
    with open(folder / "run.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        second = subprocess.Popen([svqa_bin, "run", setup / "exp.yaml", "--out", setup / "out"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        time.sleep(0.3)
        held.write(f"pid {os.getpid()} on {socket.gethostname()} since 2025-01-01 10:00:00 (svqa run exp.yaml)\n")
        held.flush()
        _, err = second.communicate()
    assert second.returncode == 1
    assert f"in use by another svqa (pid {os.getpid()} on {socket.gethostname()} since" in err


def test_two_runs_on_one_folder_answer_each_question_once(svqa_bin, setup):
    """The audit: two svqa run on one folder wrote 78 records for 39 questions."""
    procs = [subprocess.Popen([svqa_bin, "run", setup / "exp.yaml", "--out", setup / "out"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [p.communicate() + (p.returncode,) for p in procs]
    assert sorted(rc for _, _, rc in results) in ([0, 0], [0, 1])  # the second either waits its turn or is refused
    for out, err, rc in results:
        if rc == 1:
            assert "in use by another svqa (pid " in err
    lines = (setup / "out" / "folder" / "predictions.jsonl").read_text().splitlines()
    assert len(lines) == 1


def test_names_and_grid_values_stay_inside_out(svqa_bin, setup):
    r = run(svqa_bin, setup, "--set", "name=../../escaped")
    assert r.returncode == 2
    assert r.stderr.endswith('name: expected a folder name: 1 to 200 bytes, no \'/\', \'\\\' or control characters, '
                             'not \'.\' or \'..\', got "../../escaped"\n'), r.stderr
    assert not (setup / "escaped").exists() and not (setup.parent / "escaped").exists()

    grid = setup / "grid.yaml"
    grid.write_text(f"_base_: exp.yaml\ngrid:\n  axes:\n    description: ['a/../../x', b]\n")
    r = subprocess.run([svqa_bin, "grid", grid, "--out", setup / "out", "--list"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    dirs = [line.split()[-1] for line in r.stdout.splitlines()]
    assert len(dirs) == 2 and "folder__description=a_.._.._x-" in dirs[0]
    for d in dirs:
        assert os.path.realpath(d).startswith(str(setup / "out" / "grid") + "/")


def test_a_grid_goes_on_after_a_failing_run_and_lists_it(svqa_bin, setup):
    # Axis values: an empty folder, another, and the tiny export: two runs fail at run time (a missing folder
    # would be refused before any run starts, by the paths check).
    (setup / "missing_a").mkdir()
    (setup / "missing_b").mkdir()
    config = (setup / "exp.yaml").read_text()
    good = config.split("export: ")[1].split("}")[0]
    (setup / "grid.yaml").write_text(f"_base_: exp.yaml\ngrid:\n  axes:\n    backbone.options.export: "
                                     f"[{setup / 'missing_a'}, {good}, {setup / 'missing_b'}]\n")
    r = subprocess.run([svqa_bin, "grid", setup / "grid.yaml", "--out", setup / "out"], capture_output=True, text=True)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "== run 2/3" in r.stdout and "== run 3/3" in r.stdout  # went on after run 1 failed
    lines = r.stderr.splitlines()
    assert lines[0] == "svqa grid: 2 of 3 runs failed (rerun the grid to retry them; the others are kept):"
    assert len(lines) == 3 and "missing_a" in lines[1] and "missing_b" in lines[2], lines
    answered = list((setup / "out" / "grid").glob("*/predictions.jsonl"))
    assert len(answered) == 1 and answered[0].read_text().count("\n") == 1


def test_a_manifest_path_outside_the_export_is_refused(svqa_bin, tiny_export, tmp_path):
    export = tmp_path / "export"
    shutil.copytree(tiny_export("llava_onevision"), export, ignore=shutil.ignore_patterns("hf"))
    np.save(tmp_path / "f.npy", np.zeros((2, 48, 48, 3), np.uint8))
    manifest = json.loads((export / "manifest.json").read_text())
    for bad in ["../../../../etc/passwd", "/etc/passwd", "layers/../../outside.pt"]:
        manifest["files"]["layers"][0] = bad
        (export / "manifest.json").write_text(json.dumps(manifest))
        r = subprocess.run([svqa_bin, "probe", "--export", export, "--frames", tmp_path / "f.npy", "--prompt", "q"],
                           capture_output=True, text=True)
        assert r.returncode == 1
        assert r.stderr == (f'svqa probe: error: {export}/manifest.json: files.layers[0]: "{bad}" is not a path '
                            "inside the export folder\n")


@pytest.fixture(scope="module")
def two_models(tmp_path_factory):
    """Seeds 0 and 1 of a tiny LLaVA-OV export and of a tiny SigLIP expert: two models each."""
    base = tmp_path_factory.mktemp("two_models")
    made = {}
    for kind, module, tiny in (("backbone", "models.export", "llava_onevision"),
                               ("expert", "models.export.image_text", "siglip")):
        for seed in (0, 1):
            out = base / f"{kind}{seed}"
            subprocess.run([sys.executable, "-m", module, "--tiny", tiny, "--seed", str(seed), "--out", str(out)],
                           cwd=ROOT, check=True, capture_output=True)
            made[kind, seed] = out
    return made


@pytest.mark.parametrize("replaced", ["backbone", "expert"])
def test_a_resume_after_the_export_or_expert_was_replaced_is_refused_naming_it(svqa_bin, tmp_path, two_models,
                                                                               replaced):
    """A run killed after its first answer, its backbone export (or its external expert) replaced at the
    same path by another model: the rerun stops in one line naming the model, answers nothing more."""
    backbone, expert = tmp_path / "backbone", tmp_path / "expert"
    shutil.copytree(two_models["backbone", 0], backbone)
    shutil.copytree(two_models["expert", 0], expert)
    np.save(tmp_path / "clip.npy", np.random.default_rng(0).integers(0, 256, (8, 48, 48, 3), dtype=np.uint8))
    questions = [{"id": f"q{i}", "time": float(i), "question": "What?"} for i in (1, 3, 5)]
    (tmp_path / "streams.json").write_text(json.dumps({"streams": [{"id": "clip", "video": "clip.npy",
                                                                    "questions": questions}]}))
    write_experiment(tmp_path / "exp.yaml", "folder", backbone, tmp_path / "streams.json",
                     retrieval=f"{{type: external, options: {{model: {expert}, retrieve_size: 2}}}}")
    killed = subprocess.run([svqa_bin, "run", tmp_path / "exp.yaml", "--out", tmp_path / "out"],
                            env=dict(os.environ, SVQA_KILL_AFTER_RECORDS="1"), capture_output=True, text=True)
    assert killed.returncode == -9, killed.stderr
    folder = tmp_path / "out" / "folder"
    models = json.loads((folder / "models.json").read_text())
    assert sorted(models) == ["backbone.options.export", "retrieval.options.model"]
    assert "manifest.json" in models["backbone.options.export"]["files"]

    # The same model copied back in place (new files, same bytes) is the same model: it resumes.
    copy = tmp_path / "copy"
    shutil.copytree(backbone, copy)
    shutil.rmtree(backbone)
    copy.rename(backbone)
    again = subprocess.run([svqa_bin, "run", tmp_path / "exp.yaml", "--out", tmp_path / "out"],
                           env=dict(os.environ, SVQA_KILL_AFTER_RECORDS="1"), capture_output=True, text=True)
    assert again.returncode == -9, again.stderr
    answered = (folder / "predictions.jsonl").read_text()
    assert len(answered.splitlines()) == 2

    # Now another model (seed 1) at the same path.
    target = backbone if replaced == "backbone" else expert
    shutil.rmtree(target)
    shutil.copytree(two_models[replaced, 1], target)
    r = run(svqa_bin, tmp_path)
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    key = "backbone.options.export" if replaced == "backbone" else "retrieval.options.model"
    assert f"models.json: its answers were made with another model at {key} ({target}: " in lines[0]
    assert "changed)" in lines[0] and "rerun with that model to resume" in lines[0]
    assert (folder / "predictions.jsonl").read_text() == answered  # nothing answered by the new model


def test_config_yaml_holds_every_default_and_a_changed_default_blocks_the_resume(svqa_bin, setup):
    r = run(svqa_bin, setup)
    assert r.returncode == 0, r.stderr
    config = setup / "out" / "folder" / "config.yaml"
    recorded = config.read_text()
    values = yaml.safe_load(recorded)
    assert values["stream"]["chunk_frames"] == 64 and values["runtime"]["threads"] == 0  # defaults the file left out
    assert values["retrieval"]["options"]["chunk_size"] == 1
    # As an svqa whose default chunk_frames was 32 would have recorded the same experiment:
    values["stream"]["chunk_frames"] = 32
    config.write_text(yaml.safe_dump(values))
    r = run(svqa_bin, setup)
    assert r.returncode == 1
    assert "(stream.chunk_frames: 32 there, 64 now)" in r.stderr
    # Run-time-only keys resume, and config.yaml records this session's values.
    config.write_text(recorded)
    r = run(svqa_bin, setup, "--set", "runtime.threads=1", "--set", "memory.wait_s=5")
    assert r.returncode == 0 and "1 already answered" in r.stdout, r.stderr
    assert yaml.safe_load(config.read_text())["runtime"]["threads"] == 1
    r = run(svqa_bin, setup, "--set", "runtime.seed=7")
    assert r.returncode == 1 and "(runtime.seed: 0 there, 7 now)" in r.stderr
