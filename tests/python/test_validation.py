"""Validation before running: cross-field rules fail `svqa validate`, the grid's pre-check and
`svqa run` before anything is written, each with FILE:LINE:COL and the key; `--set SECTION.type`
gives the new type's defaults; the `--set 'retrieval={…}'` of docs/configuration.md."""

import re
import subprocess


def svqa(svqa_bin, root, *args):
    return subprocess.run([str(svqa_bin), *args], cwd=root, capture_output=True, text=True, timeout=60)


CROSS = "retrieval.options.chunk_size: must divide retrieve_size (8)"


def test_validate_and_run_reject_a_cross_field_error_before_writing(svqa_bin, root, tmp_path):
    exp = tmp_path / "exp.yaml"
    exp.write_text(f"_base_: {root}/experiments/demo.yaml\n"
                   f"output: {{dir: {tmp_path / 'results'}}}\n"
                   "retrieval:\n"
                   "  options: {chunk_size: 3}\n")
    r = svqa(svqa_bin, root, "validate", str(exp))
    assert r.returncode == 2 and r.stderr == f"{exp}:4:25: {CROSS}\n"
    r = svqa(svqa_bin, root, "run", str(exp))
    assert r.returncode == 2 and r.stderr == f"{exp}:4:25: {CROSS}\n"
    assert not (tmp_path / "results").exists()  # nothing written


def test_grid_precheck_rejects_a_cross_field_error_in_any_run(svqa_bin, root, tmp_path):
    exp = tmp_path / "grid.yaml"
    exp.write_text(f"_base_: {root}/experiments/demo.yaml\n"
                   f"output: {{dir: {tmp_path / 'results'}}}\n"
                   "grid:\n"
                   "  axes:\n"
                   "    retrieval.options.chunk_size: [1, 2, 3]\n")
    want = f"{exp}:5:42: {CROSS} (run demo__chunk_size=3)\n"
    r = svqa(svqa_bin, root, "grid", str(exp))
    assert r.returncode == 2 and r.stderr == want
    assert not (tmp_path / "results").exists()  # no run started
    r = svqa(svqa_bin, root, "validate", str(exp))
    assert r.returncode == 2 and r.stderr == want


def test_set_type_gives_the_new_types_defaults(svqa_bin, root):
    # demo.yaml: internal with retrieve_size 8, chunk_size 1, similarity dot; external has no `similarity`.
    r = svqa(svqa_bin, root, "validate", "experiments/demo.yaml", "--dump=set", "--no-paths",
             "--set", "retrieval.options.model=exports/siglip", "--set", "retrieval.type=external")
    assert r.returncode == 0, r.stderr
    section = r.stdout.split("retrieval:")[1].split("\nbenchmark:")[0]
    assert "type: external" in section and "model: exports/siglip" in section  # --set options apply in any order
    assert "retrieve_size" not in section and "similarity" not in section  # internal's options from the file: gone


def test_set_a_whole_section_as_documented(svqa_bin, root):
    # docs/configuration.md, "Overrides": the same command.
    r = svqa(svqa_bin, root, "validate", "experiments/demo.yaml", "--dump=set", "--no-paths",
             "--set", "retrieval={type: bank_recent, options: {retrieve_size: 8}}")
    assert r.returncode == 0, r.stderr
    section = r.stdout.split("retrieval:")[1].split("\nbenchmark:")[0]
    assert "type: bank_recent" in section and "retrieve_size: 8" in section and "similarity" not in section


def test_the_inheritance_example_of_the_docs_is_valid(svqa_bin, root, tmp_path):
    doc = (root / "docs" / "configuration.md").read_text()
    block = doc.split("## Inheritance")[1].split("```yaml\n")[1].split("```")[0]
    (tmp_path / "demo.yaml").write_text((root / "experiments" / "demo.yaml").read_text())
    (tmp_path / "recent_32.yaml").write_text(block)
    r = svqa(svqa_bin, root, "validate", str(tmp_path / "recent_32.yaml"), "--dump=set", "--no-paths")
    assert r.returncode == 0, r.stderr
    retrieval = r.stdout.split("retrieval:")[1].split("\nbenchmark:")[0]
    assert "type: bank_recent" in retrieval and "retrieve_size: 32" in retrieval and "similarity" not in retrieval
    encoding = r.stdout.split("encoding:")[1].split("\nretrieval:")[0]
    assert "n_local: 240" in encoding and "type: rekv_sliding_window" in encoding


def test_the_shipped_grids_validate_strategies_x_budgets_included(svqa_bin, root):
    # ablation.yaml: internal / bank_uniform / bank_recent × retrieve_size 4, 8 — one option name for every
    # retrieval strategy's budget, so a product grid of them is valid; its runs are named by their values.
    r = svqa(svqa_bin, root, "validate", "experiments/ablation.yaml", "--no-paths")  # the demo.sh data may not be there
    assert r.returncode == 0 and "grid of 6 runs" in r.stdout, r.stderr
    r = svqa(svqa_bin, root, "grid", "experiments/ablation.yaml", "--list")
    names = [line.split()[2] for line in r.stdout.splitlines()]
    assert names == [f"demo__retrieval={s}__retrieve_size={n}" for s in ("internal", "bank_uniform", "bank_recent") for n in (4, 8)]
    r = svqa(svqa_bin, root, "validate", "experiments/compare_methods_tiny.yaml", "--no-paths")
    assert r.returncode == 0 and "grid of 14 runs" in r.stdout, r.stderr


def test_a_missing_export_annotations_video_root_or_expert_is_refused_naming_it(svqa_bin, root, tmp_path):
    export, expert, videos = tmp_path / "export", tmp_path / "expert", tmp_path / "videos"
    for folder in (export, expert, videos):
        folder.mkdir()
    annotations = tmp_path / "streams.json"
    annotations.write_text('{"streams": []}')
    exp = tmp_path / "exp.yaml"
    exp.write_text(f"name: paths\noutput: {{dir: {tmp_path / 'results'}}}\n"
                   f"backbone: {{type: torchscript, options: {{export: {export}}}}}\n"
                   "encoding: {type: rekv_sliding_window}\n"
                   f"retrieval: {{type: external, options: {{model: {expert}}}}}\n"
                   f"benchmark: {{type: stream_list, options: {{annotations: {annotations}, video_root: {videos}}}}}\n")
    r = svqa(svqa_bin, root, "validate", str(exp))
    assert r.returncode == 0, r.stderr
    for key, path, kind in (("backbone.options.export", export, "directory"),
                            ("retrieval.options.model", expert, "directory"),
                            ("benchmark.options.annotations", annotations, "file"),
                            ("benchmark.options.video_root", videos, "directory")):
        path.rename(tmp_path / "gone")
        r = svqa(svqa_bin, root, "validate", str(exp))
        assert r.returncode == 2 and re.fullmatch(rf"{re.escape(str(exp))}:\d+:\d+: {key}: {re.escape(str(path))}: "
                                                  rf"no such {kind}\n", r.stderr), r.stderr
        r = svqa(svqa_bin, root, "validate", str(exp), "--no-paths")  # a config for data not here yet
        assert r.returncode == 0, r.stderr
        if key.endswith("video_root"):  # svqa run: refused before the model loads or the folder is made
            r = svqa(svqa_bin, root, "run", str(exp))
            assert r.returncode == 2 and f"benchmark.options.video_root: {videos}: no such directory" in r.stderr
            assert not (tmp_path / "results").exists()
        (tmp_path / "gone").rename(path)
    annotations.unlink()
    annotations.mkdir()  # a directory where a file is expected
    r = svqa(svqa_bin, root, "validate", str(exp))
    assert r.returncode == 2 and f"benchmark.options.annotations: {annotations}: not a file" in r.stderr


def test_a_context_window_over_a_whole_past_memory_is_refused_naming_both_keys(svqa_bin, root):
    # HERMES and InfiniPot-V compact their memory into one block per layer spanning [0, t]: a window
    # starting after 0 would drop it whole and answer from the sink tokens alone.
    for method in ("hermes", "infinipot_v"):
        path = f"experiments/methods/{method}.yaml"
        r = svqa(svqa_bin, root, "validate", path, "--no-paths", "--set", "stream.context_window_s=60")
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
        assert "stream.context_window_s: encoding.type " + method + " compacts its memory into blocks spanning the " \
               "whole past [0, t], which stream.context_window_s cannot cut by time" in r.stderr, r.stderr
        assert svqa(svqa_bin, root, "validate", path, "--no-paths", "--set", "stream.context_window_s=0").returncode == 0
    r = svqa(svqa_bin, root, "validate", "experiments/methods/rekv.yaml", "--no-paths", "--set", "stream.context_window_s=60")
    assert r.returncode == 0, r.stderr  # per-frame blocks: cut by their start times


def test_a_memory_cache_or_codec_the_encoders_memory_cannot_take_is_refused_naming_both_keys(svqa_bin, root):
    # What each encoder declares it does to memory (EncoderTraits at its registration) decides it: a
    # snapshot replays appended blocks only (HERMES and InfiniPot-V rewrite theirs, fresh_frames builds
    # its memory at each question), and the codec never touches a bank built at the question.
    cached = ("--set", "memory.cache=snapshots")
    for method, why in (("hermes", "evicts and rewrites the blocks it added"),
                        ("infinipot_v", "evicts and rewrites the blocks it added"),
                        ("fresh_uniform", "builds its memory at each question")):
        path = f"experiments/methods/{method}.yaml"
        r = svqa(svqa_bin, root, "validate", path, "--no-paths", *cached)
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
        assert "memory.cache: encoding.type " in r.stderr and why in r.stderr, r.stderr
    r = svqa(svqa_bin, root, "validate", "experiments/methods/fresh_uniform.yaml", "--no-paths", "--set",
             "stream.kv_codec=int8")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "stream.kv_codec: encoding.type fresh_frames answers each question from a bank it builds" in r.stderr
    for method in ("rekv", "mukv", "streamkv"):  # appended memories: saved and replayed
        assert svqa(svqa_bin, root, "validate", f"experiments/methods/{method}.yaml", "--no-paths", *cached).returncode == 0
