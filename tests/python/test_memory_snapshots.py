"""Memory snapshots (`memory.cache`, docs/experiments.md): a stream's encoding saved once and
replayed by later runs, or by a run reading it while `svqa encode` writes it. The records of the
run that saves a snapshot and of the run that replays it equal an uncached run's field for field
(timings aside) for every encoding strategy, on both tiny backbones and under both protocols
(StreamKV's open segment and MuKV's carry change memory at question times); a damaged snapshot is
refused with one line and the stream encoded again, same records; a grid's runs and two shards
started together encode each stream once; a run reading an encoder's log answers what it logged
and waits for the rest, and finishes by itself when the encoder dies or stalls. No outcome depends
on the machine's speed: encoders stop (SIGSTOP) at known points by their own hooks, and a stopped
one never logs again, whatever memory.wait_s. The key holds every config leaf the memory depends on
(a seed grid of StreamingTOM gives each seed its own; every leaf outside it varied leaves the records
as an uncached run's) and the video's content (a same-size, same-mtime swap is encoded again); an
entry removed while a run replays it does not stop the run."""

import functools
import json
import subprocess

import pytest

from resume_runs import STRATEGIES, records, run, write_experiment

TIMES = [5, 9, 13, 19]


@pytest.fixture(scope="module")
def video(tmp_path_factory, svqa_bin):
    root = tmp_path_factory.mktemp("snapshots")
    subprocess.run([svqa_bin, "make-video", root / "video.avi", "--seconds", "22"], check=True, capture_output=True)
    questions = [{"id": f"q{t:02d}", "time": float(t), "question": "What color is the background?",
                  "options": ["red", "green", "blue"], "answer": "red"} for t in TIMES]
    (root / "streams.json").write_text(json.dumps({"streams": [{"id": "s", "video": "video.avi", "questions": questions}]}))
    return root


def cached_experiment(root, strategy, export, streams, cache, protocol="streaming", retrieval=None, name="run"):
    exp = write_experiment(root / f"{name}.yaml", name, strategy, export, streams, root / "unused", protocol,
                           retrieval=retrieval)
    if cache:
        exp.write_text(exp.read_text() + f"memory: {{cache: {cache}}}\n")
    return exp


def encodes(output):
    return output.count("encoded, saved as snapshot"), output.count("answered from snapshot")


def ran(svqa_bin, exp, out):
    r = run(svqa_bin, exp, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout + r.stderr


# (strategy, backbone, protocol): every encoder on its own tiny backbone under both protocols, and
# on Qwen2.5-VL's (two-frame units, mRoPE) where the encoder runs on it.
CASES = ([(s, STRATEGIES[s][2], "streaming") for s in STRATEGIES] +
         [(s, STRATEGIES[s][2], "reencode_per_question") for s in ("streamkv_segments", "mukv_multigrain_carry")] +
         [(s, "qwen2_5_vl", "streaming") for s in ("rekv_sliding_window", "memstream_aks", "streamkv_segments")])


@pytest.mark.parametrize("strategy,backbone,protocol", CASES)
def test_saved_and_replayed_records_equal_uncached(video, svqa_bin, tiny_export, strategy, backbone, protocol):
    export = tiny_export(backbone)
    root = video / f"{strategy}-{backbone}-{protocol}"
    root.mkdir()
    plain = ran(svqa_bin, cached_experiment(root, strategy, export, video / "streams.json", None, protocol), root / "plain")
    assert encodes(plain) == (0, 0)
    exp = cached_experiment(root, strategy, export, video / "streams.json", root / "cache", protocol)
    first = ran(svqa_bin, exp, root / "first")
    second = ran(svqa_bin, exp, root / "second")
    uncached = records(root / "plain" / "run")
    assert len(uncached) == len(TIMES) and not any("error" in r for r in uncached.values())
    assert records(root / "first" / "run") == uncached
    assert records(root / "second" / "run") == uncached
    assert encodes(first) == (1, 0) and encodes(second) == (0, 1), first + second


def only_entry(cache):
    entries = [p for p in cache.iterdir() if p.is_dir()]
    assert len(entries) == 1, entries
    return entries[0]


def test_flipped_byte_in_a_retrieved_block_is_refused_and_the_stream_encoded_again(video, svqa_bin, tiny_export):
    root = video / "flipped-kv"
    root.mkdir()
    exp = cached_experiment(root, "rekv_sliding_window", tiny_export("llava_onevision"), video / "streams.json",
                            root / "cache")
    ran(svqa_bin, exp, root / "first")
    whole = records(root / "first" / "run")
    entry = only_entry(root / "cache")
    index = json.loads((entry / "index.json").read_text())
    blocks = [b for e in index["events"] for b in e["blocks"]]
    retrieved = whole["q05"]["retrieved"][0][0]  # a block the first question reads, in layer 0
    data = bytearray((entry / "memory.kv").read_bytes())
    data[blocks[retrieved]["base"] + 5] ^= 0x10
    (entry / "memory.kv").write_bytes(bytes(data))
    out = ran(svqa_bin, exp, root / "second")
    assert sum("memory snapshot changed since it was written (checksum differs)" in line
               for line in out.splitlines()) == 1, out
    assert records(root / "second" / "run") == whole
    # The damaged entry went; the stream's memory is not saved again by the run that found it.
    assert not (root / "cache" / entry.name).exists()


def test_damaged_index_is_refused_with_one_line_and_the_stream_encoded_again(video, svqa_bin, tiny_export):
    root = video / "flipped-index"
    root.mkdir()
    exp = cached_experiment(root, "streamkv_segments", tiny_export("llava_onevision"), video / "streams.json",
                            root / "cache")
    ran(svqa_bin, exp, root / "first")
    entry = only_entry(root / "cache")
    text = bytearray((entry / "index.json").read_bytes())
    text[len(text) // 2] ^= 0x01
    (entry / "index.json").write_bytes(bytes(text))
    out = ran(svqa_bin, exp, root / "second")
    assert [line for line in out.splitlines() if "memory cache:" in line] == [
        f"memory cache: {entry}: index checksum differs; not used: encoding the stream again"], out
    assert encodes(out) == (1, 0)
    assert records(root / "second" / "run") == records(root / "first" / "run")
    # Cut short: the data file's size no longer the one written.
    data = entry.parent / only_entry(root / "cache").name / "memory.kv"
    data.write_bytes(data.read_bytes()[:-7])
    out = ran(svqa_bin, exp, root / "third")
    assert " written; not used: encoding the stream again" in out and encodes(out) == (1, 0)
    assert records(root / "third" / "run") == records(root / "first" / "run")


def grid_file(root, export, streams, cache, sizes=(1, 2, 3, 4), name="grid"):
    """A grid of ReKV runs over `sizes` retrieve sizes; `cache`: memory.cache as written (None: not set)."""
    memory = "" if cache is None else f"memory: {{cache: {cache}}}"
    (root / f"{name}.yaml").write_text(f"""
name: grid
backbone: {{type: torchscript, options: {{export: {export}}}}}
encoding: {{type: rekv_sliding_window, options: {{n_local: 30}}}}
retrieval: {{type: internal, options: {{retrieve_size: 3}}}}
benchmark: {{type: stream_list, options: {{annotations: {streams}}}}}
stream: {{fps: 0.5, chunk_frames: 4, max_new_tokens: 3}}
runtime: {{threads: 1}}
{memory}
output: {{dir: {root / 'results'}}}
grid:
  mode: product
  axes:
    retrieval.options.retrieve_size: {list(sizes)}
""")
    return root / f"{name}.yaml"


def test_a_grid_of_retrieval_settings_encodes_each_stream_once(video, svqa_bin, tiny_export):
    root = video / "grid"
    root.mkdir()
    r = subprocess.run([svqa_bin, "grid", grid_file(root, tiny_export("llava_onevision"), video / "streams.json",
                                                    root / "cache")], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert encodes(r.stdout + r.stderr) == (1, 3)


def test_a_grid_shares_one_memory_cache_by_default_unless_its_file_turns_it_off(video, svqa_bin, tiny_export):
    root = video / "grid-default"
    root.mkdir()
    export = tiny_export("llava_onevision")
    for name, cache, expected in (("shared", None, (1, 1)), ("off", '""', (0, 0))):
        r = subprocess.run([svqa_bin, "grid", grid_file(root, export, video / "streams.json", cache, (2, 3), name)],
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stdout + r.stderr
        assert encodes(r.stdout) == expected, r.stdout
    assert only_entry(root / "results" / "shared" / "memory_cache")  # under the grid's results
    assert not (root / "results" / "off" / "memory_cache").exists()


def test_two_shards_filling_one_cache_encode_the_stream_once(video, svqa_bin, tiny_export):
    root = video / "shards"
    root.mkdir()
    grid = grid_file(root, tiny_export("llava_onevision"), video / "streams.json", root / "cache")
    shards = [subprocess.Popen([svqa_bin, "grid", grid, "--shard", f"{i}/2"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True) for i in range(2)]
    outputs = [p.communicate(timeout=600)[0] for p in shards]
    assert all(p.returncode == 0 for p in shards), outputs
    assert encodes("".join(outputs)) == (1, 3), outputs


def cache_ls(svqa_bin, cache):
    r = subprocess.run([svqa_bin, "cache", "ls", cache], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return [line.split()[0] for line in r.stdout.splitlines()[:-1]], r.stdout


def two_encoders(root, video, export):
    """Two experiments sharing root/cache whose encodings differ (two cache entries)."""
    root.mkdir()
    return [cached_experiment(root, strategy, export, video / "streams.json", root / "cache", name=name)
            for strategy, name in (("rekv_sliding_window", "a"), ("memstream_aks", "b"))]


def test_cache_ls_rm_and_gc_remove_least_recently_used_first(video, svqa_bin, tiny_export):
    root = video / "upkeep"
    a, b = two_encoders(root, video, tiny_export("llava_onevision"))
    ran(svqa_bin, a, root / "a1")
    key_a = only_entry(root / "cache").name
    ran(svqa_bin, b, root / "b1")
    assert encodes(ran(svqa_bin, a, root / "a2")) == (0, 1)  # a replayed: b is now the least recently used
    keys, listing = cache_ls(svqa_bin, root / "cache")
    assert len(keys) == 2 and keys[1] == key_a, listing
    sizes = {p.name: sum(f.stat().st_size for f in p.iterdir()) for p in (root / "cache").iterdir() if p.is_dir()}
    bound = (max(sizes.values()) + 1000) / 1e9  # one entry fits, both do not
    r = subprocess.run([svqa_bin, "cache", "gc", root / "cache", "--max-gb", f"{bound:.9f}"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith(f"removed {keys[0]}\n"), r.stdout + r.stderr
    assert cache_ls(svqa_bin, root / "cache")[0] == [key_a]
    r = subprocess.run([svqa_bin, "cache", "rm", root / "cache", "0123456789abcdef"], capture_output=True, text=True)
    assert r.returncode == 2 and "no entry 0123456789abcdef" in r.stderr
    r = subprocess.run([svqa_bin, "cache", "gc", root / "cache", "--max-gb", "lots"], capture_output=True, text=True)
    assert r.returncode == 2 and "--max-gb: expected a number of GB" in r.stderr
    r = subprocess.run([svqa_bin, "cache", "rm", root / "cache", key_a], capture_output=True, text=True)
    assert r.returncode == 0 and cache_ls(svqa_bin, root / "cache")[0] == []


def test_max_gb_bounds_the_cache_after_each_save(video, svqa_bin, tiny_export):
    root = video / "bounded"
    a, b = two_encoders(root, video, tiny_export("llava_onevision"))
    ran(svqa_bin, a, root / "a1")
    key_a = only_entry(root / "cache").name
    b.write_text(b.read_text().replace(f"memory: {{cache: {root / 'cache'}}}",
                                       f"memory: {{cache: {root / 'cache'}, max_gb: 0.000000001}}"))
    out = ran(svqa_bin, b, root / "b1")
    assert f"memory cache: removed {root / 'cache' / key_a} (" in out, out
    assert only_entry(root / "cache").name != key_a  # the entry just saved stays, over the bound or not


@pytest.mark.parametrize("strategy", ["rekv_sliding_window", "streamkv_segments", "mukv_multigrain_carry"])
def test_svqa_encode_then_run_and_both_started_together_answer_as_one_process(video, svqa_bin, tiny_export, strategy):
    root = video / f"two-processes-{strategy}"
    root.mkdir()
    export = tiny_export(STRATEGIES[strategy][2])
    ran(svqa_bin, cached_experiment(root, strategy, export, video / "streams.json", None), root / "plain")
    uncached = records(root / "plain" / "run")
    exp = cached_experiment(root, strategy, export, video / "streams.json", root / "cache")
    enc = subprocess.run([svqa_bin, "encode", exp], capture_output=True, text=True, timeout=600)
    assert enc.returncode == 0 and encodes(enc.stdout) == (1, 0), enc.stdout + enc.stderr
    assert not list((root / "cache").glob("encoding.*"))  # its scratch folder is gone
    assert encodes(ran(svqa_bin, exp, root / "after")) == (0, 1)
    assert records(root / "after" / "run") == uncached
    again = subprocess.run([svqa_bin, "encode", exp], capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and "memory: s: saved already" in again.stdout, again.stdout + again.stderr

    # Started together on an empty cache: whichever takes the entry's lock first encodes, the other
    # reads its log as it is written; the stream is encoded once and the answers are the one-process run's.
    exp2 = cached_experiment(root, strategy, export, video / "streams.json", root / "cache2", name="together")
    procs = [subprocess.Popen([svqa_bin, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for args in (["encode", exp2], ["run", exp2, "--out", root / "together"])]
    outputs = [p.communicate(timeout=600)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    assert encodes("".join(outputs))[0] == 1, outputs
    assert records(root / "together" / "together") == uncached


def test_svqa_encode_needs_memory_cache(video, svqa_bin, tiny_export, tmp_path):
    exp = cached_experiment(tmp_path, "rekv_sliding_window", tiny_export("llava_onevision"), video / "streams.json", None)
    r = subprocess.run([svqa_bin, "encode", exp], capture_output=True, text=True)
    assert r.returncode == 2 and "memory.cache is not set" in r.stderr, r.stderr


def plain_run_and_cached_experiment(video, svqa_bin, tiny_export, name, strategy):
    """A folder `name` holding the uncached run of `strategy` (root/plain) and the experiment with a cache."""
    root = video / name
    root.mkdir()
    export = tiny_export("llava_onevision")
    ran(svqa_bin, cached_experiment(root, strategy, export, video / "streams.json", None), root / "plain")
    return root, cached_experiment(root, strategy, export, video / "streams.json", root / "cache")


def test_encoder_killed_mid_stream_then_rerun_answers_unchanged(video, svqa_bin, tiny_export):
    import os
    import signal

    root, exp = plain_run_and_cached_experiment(video, svqa_bin, tiny_export, "killed-encoder", "streamkv_segments")
    killed = subprocess.run([svqa_bin, "encode", exp], capture_output=True, text=True, timeout=600,
                            env=dict(os.environ, SVQA_KILL_AFTER_SNAPSHOT_CALLS="4"))
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    assert [p.name.split(".")[1] for p in (root / "cache").iterdir() if p.is_dir()].count("tmp") == 1  # half-written
    out = ran(svqa_bin, exp, root / "after")  # no entry: the run encodes, removing the dead writer's folder
    assert encodes(out) == (1, 0)
    assert records(root / "after" / "run") == records(root / "plain" / "run")
    assert not [p for p in (root / "cache").iterdir() if ".tmp." in p.name]
    assert len(list((root / "cache").glob("encoding.*"))) == 1  # the killed encoder's spill folder
    again = subprocess.run([svqa_bin, "encode", exp], capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and "saved already" in again.stdout
    assert not list((root / "cache").glob("encoding.*"))  # the killed encoder's scratch folder went too


def test_run_waits_for_an_encoder_and_says_so_when_it_died(video, svqa_bin, tiny_export):
    import os
    import signal

    root, exp = plain_run_and_cached_experiment(video, svqa_bin, tiny_export, "died-encoder", "rekv_sliding_window")
    encoder = subprocess.Popen([svqa_bin, "encode", exp], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env=dict(os.environ, SVQA_STOP_AFTER_SNAPSHOT_CALLS="2"))
    _, status = os.waitpid(encoder.pid, os.WUNTRACED)  # stopped mid-stream, holding the entry's lock
    assert os.WIFSTOPPED(status)
    runner = subprocess.Popen([svqa_bin, "run", exp, "--out", root / "after"], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    lines = []
    for line in runner.stdout:  # read until the run says it waits (no timer: it blocks on the lock)
        lines.append(line)
        if "another process is encoding this stream" in line:
            break
    os.kill(encoder.pid, signal.SIGKILL)
    encoder.wait()
    out = "".join(lines) + runner.stdout.read()
    assert runner.wait() == 0, out
    assert "the process encoding this stream stopped without saving it (killed?): encoding it here" in out
    assert encodes(out) == (1, 0)
    assert records(root / "after" / "run") == records(root / "plain" / "run")


def stopped_encoder(svqa_bin, exp, question):
    """`svqa encode exp` stopped (SIGSTOP, by its own hook) right after it logged telling the encoder
    of `question`: mid-stream, holding the entry's lock, its log written up to that question."""
    import os

    encoder = subprocess.Popen([svqa_bin, "encode", exp], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env=dict(os.environ, SVQA_STOP_AFTER_SNAPSHOT_QUESTION=question))
    _, status = os.waitpid(encoder.pid, os.WUNTRACED)
    assert os.WIFSTOPPED(status)
    return encoder


def read_until(process, text):
    """The lines `process` printed up to the first one holding `text` (no timer: reading blocks)."""
    lines = []
    for line in process.stdout:
        lines.append(line)
        if text in line:
            break
    return "".join(lines)


WAITING = "memory cache: waiting for the encoder to log "


def test_run_answers_from_the_encoders_log_as_it_goes_and_waits_where_it_has_not_reached(video, svqa_bin, tiny_export):
    import os
    import signal

    root, exp = plain_run_and_cached_experiment(video, svqa_bin, tiny_export, "following", "streamkv_segments")
    encoder = stopped_encoder(svqa_bin, exp, "q05")
    runner = subprocess.Popen([svqa_bin, "run", exp, "--out", root / "after"], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    before = read_until(runner, WAITING)
    # The encoder stopped right after question q05: the run answered q05 from its log, then waits
    # for a call the encoder has not logged, with q09 not yet answered.
    assert "another process is encoding this stream" in before and "s/q05 @5.0 s" in before, before
    assert "s/q09" not in before and set(records(root / "after" / "run")) == {"q05"}
    os.kill(encoder.pid, signal.SIGCONT)
    out = before + runner.stdout.read()
    assert runner.wait() == 0, out
    written = encoder.communicate(timeout=600)[0]
    assert encoder.returncode == 0 and encodes(written) == (1, 0), written
    assert encodes(out) == (0, 1) and "(read as another process wrote it)" in out, out
    assert records(root / "after" / "run") == records(root / "plain" / "run")


@pytest.mark.parametrize("how", ["killed", "stalled"])
def test_run_following_an_encoder_that_dies_or_stalls_finishes_by_itself(video, svqa_bin, tiny_export, how):
    import os
    import signal

    root, exp = plain_run_and_cached_experiment(video, svqa_bin, tiny_export, f"follow-{how}", "rekv_sliding_window")
    encoder = stopped_encoder(svqa_bin, exp, "q05")
    bound = ["--set", "memory.wait_s=0.2"] if how == "stalled" else []  # the stopped encoder never logs again
    runner = subprocess.Popen([svqa_bin, "run", exp, "--out", root / "after", *bound], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    out = read_until(runner, WAITING)
    if how == "killed":
        os.kill(encoder.pid, signal.SIGKILL)
    out += runner.stdout.read()
    rc = runner.wait()
    os.kill(encoder.pid, signal.SIGKILL)
    encoder.wait()
    assert rc == 0, out
    line = {"killed": "memory cache: the process encoding this stream stopped without saving it (killed?): encoding it here",
            "stalled": "memory cache: the process encoding this stream logged nothing for 0.2 s (memory.wait_s): "
                       "encoding it here, not saved"}[how]
    assert [l.strip() for l in out.splitlines() if "memory cache: the process" in l] == [line], out
    assert records(root / "after" / "run") == records(root / "plain" / "run")
    assert encodes(out) == (0, 0)  # q05 came from the encoder's log; the rest was encoded here, not saved


def test_memory_wait_s_is_validated(video, svqa_bin, tiny_export, tmp_path):
    exp = cached_experiment(tmp_path, "rekv_sliding_window", tiny_export("llava_onevision"), video / "streams.json",
                            tmp_path / "cache")
    r = subprocess.run([svqa_bin, "validate", exp, "--set", "memory.wait_s=-1"], capture_output=True, text=True)
    assert r.returncode == 2 and "memory.wait_s" in r.stderr, r.stdout + r.stderr


def tom_grid(root, export, streams, cache, axes, name):
    """A grid of StreamingTOM runs (its CTR draws tie-break noise from runtime.seed) over `axes`
    ({dotted key: values}); `cache`: memory.cache as written (None: the grid's shared default). With k 1 the
    two tokens nearest each other tie in density, so the seeded noise picks which is a frame's first centre."""
    memory = "" if cache is None else f"memory: {{cache: {cache}}}"
    axes_yaml = "\n".join(f"    {key}: {json.dumps(values)}" for key, values in axes.items())
    (root / f"{name}.yaml").write_text(f"""
name: tom
backbone: {{type: torchscript, options: {{export: {export}}}}}
encoding: {{type: streamingtom, options: {{retain_tokens: 2, n_local: 30, k: 1}}}}
retrieval: {{type: internal, options: {{retrieve_size: 2}}}}
benchmark: {{type: stream_list, options: {{annotations: {streams}}}}}
stream: {{fps: 0.5, chunk_frames: 4, max_new_tokens: 2, record_logits: true}}
runtime: {{threads: 1}}
{memory}
output: {{dir: {root / 'results'}}}
grid:
  mode: product
  axes:
{axes_yaml}
""")
    return root / f"{name}.yaml"


def grid_records(root, name):
    """{run name: records} of grid `name` under root/results."""
    runs = json.loads((root / "results" / name / "grid.json").read_text())["runs"]
    out = {}
    for run_name in runs:
        (folder,) = [p for p in (root / "results" / name).iterdir() if p.name.startswith(run_name + "-")]
        out[run_name] = records(folder)
    return out


def test_a_seed_grid_sharing_a_cache_gives_each_seed_its_own_memory(video, svqa_bin, tiny_export):
    root = video / "seed-grid"
    root.mkdir()
    export = tiny_export("llava_onevision")
    for name, cache in (("shared", None), ("off", '""')):
        r = subprocess.run([svqa_bin, "grid", tom_grid(root, export, video / "streams.json", cache,
                                                       {"runtime.seed": [0, 7]}, name)],
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stdout + r.stderr
        assert encodes(r.stdout) == ((2, 0) if name == "shared" else (0, 0)), r.stdout
    shared, uncached = grid_records(root, "shared"), grid_records(root, "off")
    seeds = sorted(uncached)
    assert uncached[seeds[0]] != uncached[seeds[1]]  # the seed changes StreamingTOM's memory, and so its answers
    assert shared == uncached


def test_a_video_swapped_at_the_same_path_size_and_mtime_is_encoded_again(video, svqa_bin, tiny_export, tmp_path):
    import os
    import shutil

    import numpy as np

    root = tmp_path
    export = tiny_export("llava_onevision")
    for name, seed in (("a", 1), ("b", 2)):  # 12 frames at the run's 0.5 fps: 24 s, the same bytes long
        np.save(root / f"{name}.npy", np.random.default_rng(seed).integers(0, 256, (12, 48, 48, 3), dtype=np.uint8))
    assert (root / "a.npy").stat().st_size == (root / "b.npy").stat().st_size
    shutil.copy2(root / "a.npy", root / "video.npy")
    stream = {**json.loads((video / "streams.json").read_text())["streams"][0], "video": "video.npy"}
    (root / "streams.json").write_text(json.dumps({"streams": [stream]}))
    exp = cached_experiment(root, "rekv_sliding_window", export, root / "streams.json", root / "cache")
    assert encodes(ran(svqa_bin, exp, root / "first")) == (1, 0)
    stat = (root / "video.npy").stat()
    shutil.copyfile(root / "b.npy", root / "video.npy")  # another video, same size, its mtime set back (cp -p)
    os.utime(root / "video.npy", ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert (root / "video.npy").stat().st_mtime_ns == stat.st_mtime_ns
    assert encodes(ran(svqa_bin, exp, root / "second")) == (1, 0)
    plain = ran(svqa_bin, cached_experiment(root, "rekv_sliding_window", export, root / "streams.json", None,
                                            name="plain"), root / "plain")
    assert encodes(plain) == (0, 0)
    assert records(root / "second" / "run") == records(root / "plain" / "plain")
    assert records(root / "second" / "run") != records(root / "first" / "run")
    # Moved elsewhere, the same video still finds its snapshot.
    shutil.move(root / "video.npy", root / "moved.npy")
    (root / "streams.json").write_text(json.dumps({"streams": [{**stream, "video": "moved.npy"}]}))
    assert encodes(ran(svqa_bin, exp, root / "third")) == (0, 1)


@pytest.mark.parametrize("how", ["rm", "gc"])
def test_cache_rm_or_gc_while_a_run_replays_the_entry_does_not_stop_it(video, svqa_bin, tiny_export, how):
    from resume_runs import Stopped

    root, exp = plain_run_and_cached_experiment(video, svqa_bin, tiny_export, f"removed-mid-replay-{how}",
                                                "rekv_sliding_window")
    ran(svqa_bin, exp, root / "first")
    key = only_entry(root / "cache").name
    replaying = Stopped(svqa_bin, exp, after=1, log=root / "replay.log", out=root / "after")
    args = ["rm", root / "cache", key] if how == "rm" else ["gc", root / "cache", "--max-gb", "0"]
    r = subprocess.run([svqa_bin, "cache", *args], capture_output=True, text=True)
    assert r.returncode == 0 and f"removed {key}" in r.stdout, r.stdout + r.stderr
    assert not (root / "cache" / key).exists()
    rc, out = replaying.resume()
    assert rc == 0, out
    assert encodes(out) == (0, 1), out
    assert records(root / "after" / "run") == records(root / "plain" / "run")


def test_a_failed_svqa_encode_leaves_no_scratch_folder(video, svqa_bin, tiny_export, tmp_path):
    exp = cached_experiment(tmp_path, "rekv_sliding_window", tiny_export("llava_onevision"), video / "streams.json",
                            tmp_path / "cache")
    blocker = tmp_path / "a-file"  # the spill folder cannot be made under it: the encoding fails mid-run
    blocker.write_text("")
    exp.write_text(exp.read_text().replace("protocol: streaming", f"protocol: streaming, spill_dir: {blocker}/spill"))
    r = subprocess.run([svqa_bin, "encode", exp], capture_output=True, text=True, timeout=600)
    assert r.returncode != 0 and str(blocker) in r.stderr, r.stdout + r.stderr
    assert (tmp_path / "cache").is_dir()
    assert not list((tmp_path / "cache").glob("encoding.*")), r.stdout + r.stderr


def test_kv_codec_group_is_bounded_at_validation(video, svqa_bin, tiny_export, tmp_path):
    exp = cached_experiment(tmp_path, "rekv_sliding_window", tiny_export("llava_onevision"), video / "streams.json", None)
    r = subprocess.run([svqa_bin, "validate", exp, "--set", "stream.kv_codec=int4", "--set",
                        "stream.kv_codec_group=65536"], capture_output=True, text=True)
    assert r.returncode == 2, r.stdout + r.stderr
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "stream.kv_codec_group" in lines[0] and "1024" in lines[0], r.stderr


# Varied values no schema bound suggests (strings; a size that must stay a multiple of the varied
# chunk_size); every other leaf is varied from its type.
VARIED_VALUES = {"description": "varied", "label": "Varied", "stream.answer_prompt": "Q: {question}\nA:",
                 "judge.base_url": "http://127.0.0.1:9/v1", "judge.model": "varied", "judge.api_key_env": "VARIED_KEY",
                 "retrieval.options.retrieve_size": 4}
SET_BY_THE_RUN = {"name", "output.dir", "memory.cache"}  # the test's folders and cache, not varied
# Sections no run reads: a grid's axes and its Slurm job (they make runs), the paper's figure (report only).
NOT_A_RUNS = ("grid", "slurm", "expected")


def schema_leaves(svqa_bin):
    """{dotted leaf: its field from `svqa list --json`} of every experiment key, and of the retrieval strategy's options."""
    listing = json.loads(subprocess.run([svqa_bin, "list", "--json"], capture_output=True, text=True, check=True).stdout)

    def walk(fields, prefix):
        for f in fields:
            if f.get("fields"):
                yield from walk(f["fields"], f"{prefix}{f['name']}.")
            else:
                yield f"{prefix}{f['name']}", f

    leaves = dict(walk(listing["experiment"], ""))
    (internal,) = [e for e in listing["registries"]["retrieval"]["entries"] if e["name"] == "internal"]
    leaves.update(walk(internal["options"], "retrieval.options."))
    return leaves


def varied(leaf, field, value, root):
    """Another valid value of `leaf` (now `value`)."""
    if leaf in VARIED_VALUES:
        return VARIED_VALUES[leaf]
    if field.get("choices"):
        return next(c for c in field["choices"] if c != value)
    if field["type"] == "boolean":
        return not value
    if field["type"] in ("integer", "number"):
        up = value + 1 if field["type"] == "integer" or value == 0 else value * 2
        return up if up <= field.get("max", float("inf")) else value - 1
    if field["type"] == "string" and leaf.endswith(("dir", "cache")):
        return str(root / leaf.replace(".", "_"))
    pytest.fail(f"{leaf}: no varied value for a {field['type']}: add one to VARIED_VALUES")


def with_leaves(base, leaves):
    """`base` (nested dicts) with each dotted leaf of `leaves` set."""
    import copy

    out = copy.deepcopy(base)
    for leaf, value in leaves.items():
        *path, key = leaf.split(".")
        node = out
        for part in path:
            node = node.setdefault(part, {})
        node[key] = value
    return out


def test_every_config_leaf_outside_the_key_leaves_the_memory_as_it_is(svqa_bin, tiny_export, tmp_path):
    """Each leaf the snapshot key leaves out, varied (all at once, in one run answered from the
    baseline's snapshot): its records equal an uncached run's with the same values. A leaf that changed
    the memory without being in the key would make them differ. The key's leaves are read from the
    snapshot's own key material, with every stream and runtime leaf written out, so a leaf added later
    is varied here unless the key holds it."""
    import yaml

    root = tmp_path
    subprocess.run([svqa_bin, "make-video", root / "video.avi", "--seconds", "10"], check=True, capture_output=True)
    questions = [{"id": f"q{t}", "time": float(t), "question": "What color is the background?",
                  "options": ["red", "green", "blue"], "answer": "red"} for t in (5, 9)]
    (root / "streams.json").write_text(json.dumps({"streams": [{"id": "s", "video": "video.avi", "questions": questions}]}))
    leaves = schema_leaves(svqa_bin)
    defaults = {leaf: yaml.safe_load(f["default"]) for leaf, f in leaves.items() if "default" in f}
    base = with_leaves({
        "backbone": {"type": "torchscript", "options": {"export": str(tiny_export("llava_onevision"))}},
        "encoding": {"type": "streamingtom", "options": {"retain_tokens": 2, "n_local": 30, "k": 1}},
        "retrieval": {"type": "internal", "options": {}},
        "benchmark": {"type": "stream_list", "options": {"annotations": str(root / "streams.json")}},
    }, {**{leaf: v for leaf, v in defaults.items() if leaf.split(".")[0] in ("stream", "runtime", "retrieval")},
        # record_logits off here, so varied (on) the compared runs record the first token's logits.
        "stream.fps": 0.5, "stream.chunk_frames": 4, "stream.max_new_tokens": 2, "stream.record_logits": False,
        "runtime.threads": 1, "retrieval.options.retrieve_size": 2, "memory.cache": str(root / "cache")})

    def run_with(config, name):
        path = root / f"{name}.yaml"
        path.write_text(yaml.safe_dump(with_leaves(config, {"name": "run"})))
        return ran(svqa_bin, path, root / name)

    assert encodes(run_with(base, "baseline")) == (1, 0)
    material = json.loads((only_entry(root / "cache") / "index.json").read_text())["key"]
    in_key = ({f"stream.{k}" for k in yaml.safe_load(material["stream"])} |
              {k if k.startswith("runtime.") else f"runtime.{k}" for k in material["runtime"]} |
              {leaf for leaf in leaves if leaf.split(".")[0] in ("backbone", "encoding")})
    outside = sorted(leaf for leaf in set(leaves) - in_key - SET_BY_THE_RUN if leaf.split(".")[0] not in NOT_A_RUNS)
    def now(leaf):
        node = functools.reduce(lambda n, k: n.get(k, {}) if isinstance(n, dict) else {}, leaf.split("."), base)
        return defaults.get(leaf) if node == {} else node

    changes = {leaf: varied(leaf, leaves[leaf], now(leaf), root) for leaf in outside}
    assert "stream.answer_prompt" in changes and "retrieval.options.retrieve_size" in changes, changes
    cached = run_with(with_leaves(base, changes), "varied")
    assert encodes(cached) == (0, 1), f"varied {sorted(changes)}: {cached}"
    uncached = run_with(with_leaves(base, {**changes, "memory.cache": ""}), "uncached")
    assert encodes(uncached) == (0, 0)
    assert records(root / "varied" / "run") == records(root / "uncached" / "run"), f"varied: {changes}"
