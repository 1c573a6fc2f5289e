"""The svqa command line as users call it: exit codes, one-line errors, list --json."""

import json
import subprocess


def svqa(svqa_bin, root, *args):
    return subprocess.run([str(svqa_bin), *args], cwd=root, capture_output=True, text=True, timeout=60)


def test_version(svqa_bin, root):
    r = svqa(svqa_bin, root, "--version")
    assert r.returncode == 0
    assert r.stdout.startswith("svqa ")


def test_validate_demo(svqa_bin, root):
    # --no-paths: the demo's export and video are made by scripts/demo.sh, maybe not yet.
    r = svqa(svqa_bin, root, "validate", "experiments/demo.yaml", "--no-paths")
    assert r.returncode == 0, r.stderr
    assert "experiments/demo.yaml: ok: experiment 'demo'" in r.stdout


def test_dump_is_resolved_and_reflects_overrides(svqa_bin, root):
    r = svqa(svqa_bin, root, "validate", "experiments/demo.yaml", "--no-paths", "--dump", "--set", "runtime.threads=1")
    assert r.returncode == 0, r.stderr
    assert "threads: 1" in r.stdout
    assert "name: demo" in r.stdout
    assert "kv_codec_group: 32" in r.stdout  # a default the file leaves out: every value a run uses
    r = svqa(svqa_bin, root, "validate", "experiments/demo.yaml", "--no-paths", "--dump=set")
    assert r.returncode == 0 and "threads: 2" in r.stdout and "kv_codec_group" not in r.stdout, r.stderr


def test_config_error_is_one_located_line_and_exit_2(svqa_bin, root, tmp_path):
    exp = tmp_path / "x.yaml"
    exp.write_text("runtime:\n  threads: ten\n")
    r = svqa(svqa_bin, root, "validate", str(exp))
    assert r.returncode == 2
    assert r.stderr == f'{exp}:2:12: runtime.threads: expected an integer in [0, 1024], got "ten"\n'
    assert r.stdout == ""


def test_unknown_strategy_names_the_registry(svqa_bin, root, tmp_path):
    exp = tmp_path / "x.yaml"
    exp.write_text("retrieval:\n  type: nearest\n")
    r = svqa(svqa_bin, root, "validate", str(exp))
    assert r.returncode == 2
    assert r.stderr.startswith(f"{exp}:2:9: retrieval.type: unknown retrieval strategy 'nearest'")


def test_bad_override_exit_2(svqa_bin, root):
    r = svqa(svqa_bin, root, "validate", "experiments/demo.yaml", "--set", "runtime.thread=2")
    assert r.returncode == 2
    assert r.stderr == "--set runtime.thread=2: runtime.thread: unknown key (did you mean 'threads'?)\n"


def test_override_keeps_commas(svqa_bin, root):
    # A list value must reach the schema whole, not split by the option parser.
    r = svqa(svqa_bin, root, "validate", "experiments/demo.yaml", "--set", "runtime.threads=[1,2]")
    assert r.returncode == 2
    assert r.stderr == '--set runtime.threads=[1,2]: runtime.threads: expected an integer in [0, 1024], got a list\n'


def test_missing_file_and_usage_errors(svqa_bin, root):
    r = svqa(svqa_bin, root, "validate", "experiments/nope.yaml")
    assert (r.returncode, r.stderr) == (2, "experiments/nope.yaml: file not found\n")
    r = svqa(svqa_bin, root, "validate", "experiments")
    assert (r.returncode, r.stderr) == (2, "experiments: is a directory, expected a YAML file\n")
    r = svqa(svqa_bin, root, "validate")
    assert r.returncode == 2 and "missing the experiment file" in r.stderr
    r = svqa(svqa_bin, root, "valdate", "x.yaml")
    assert r.returncode == 2 and "did you mean 'validate'?" in r.stderr
    r = svqa(svqa_bin, root, "list", "--jsn")
    assert r.returncode == 2 and "jsn" in r.stderr


def test_run_requires_every_component(svqa_bin, root, tmp_path):
    exp = tmp_path / "partial.yaml"
    exp.write_text("name: partial\nencoding: {type: rekv_sliding_window}\n")
    out = tmp_path / "out"
    r = svqa(svqa_bin, root, "run", str(exp), "--out", str(out))
    assert r.returncode == 2
    assert f"{exp}: backbone: missing section" in r.stderr
    assert not out.exists(), "nothing is written for an experiment that cannot run"


def test_list_json(svqa_bin, root):
    r = svqa(svqa_bin, root, "list", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert set(data["registries"]) == {"backbone", "encoding", "retrieval", "benchmark"}
    assert data["registries"]["retrieval"]["kind"] == "retrieval strategy"
    for reg in data["registries"].values():
        for entry in reg["entries"]:
            assert entry["name"] and entry["description"] and "options" in entry
    runtime = next(f for f in data["experiment"] if f["name"] == "runtime")
    fields = {f["name"]: f for f in runtime["fields"]}
    assert fields["dtype"]["choices"] == ["float32", "float16", "bfloat16"]
    assert fields["threads"]["default"] == "0" and fields["threads"]["min"] == 0


def test_list_names_every_architecture_the_exporter_takes(svqa_bin, root):
    """`svqa list` says which models the torchscript backbone runs: every one python -m models.export makes."""
    import ast

    tree = ast.parse((root / "models" / "export" / "__main__.py").read_text())
    exported = next(ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                    and any(getattr(t, "id", None) == "ARCHITECTURES" for t in n.targets))
    shown = {"llava_onevision": "LLaVA-OneVision", "qwen2_5_vl": "Qwen2.5-VL", "qwen3_vl": "Qwen3-VL"}
    assert set(exported) == set(shown), "a new architecture: add its display name here and to register_builtin.cpp"
    r = svqa(svqa_bin, root, "list", "--json")
    assert r.returncode == 0, r.stderr
    torchscript = next(e for e in json.loads(r.stdout)["registries"]["backbone"]["entries"] if e["name"] == "torchscript")
    for name in shown.values():
        assert name in torchscript["description"], (name, torchscript["description"])


def test_list_shows_the_grid_and_slurm_keys(svqa_bin, root):
    r = svqa(svqa_bin, root, "list")
    assert r.returncode == 0, r.stderr
    keys = r.stdout.split("\n\n")[0]  # "experiment keys:" up to the first section
    assert "\n  grid: section" in keys and "\n    mode: string = product [product|zip]" in keys
    assert "\n  slurm: section" in keys and "\n    stream_shards: integer = 1 [1..10000]" in keys
    data = json.loads(svqa(svqa_bin, root, "list", "--json").stdout)
    fields = {f["name"]: f for f in data["experiment"]}
    assert [f["name"] for f in fields["grid"]["fields"]] == ["mode", "axes"]
    assert "partition" in [f["name"] for f in fields["slurm"]["fields"]]


def test_list_name_shows_that_component_key_or_section_alone(svqa_bin, root):
    r = svqa(svqa_bin, root, "list", "hermes")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("encoding (encoding strategies, ") and "\n  hermes  # HERMES" in r.stdout
    assert "rekv_sliding_window  #" not in r.stdout and "experiment keys:" not in r.stdout
    assert "\n  retrieval internal: fits encoding hermes\n" in r.stdout  # its pairs, not the others'
    assert "rekv_sliding_window" not in r.stdout
    data = json.loads(svqa(svqa_bin, root, "list", "hermes", "--json").stdout)
    assert [e["name"] for e in data["registries"]["encoding"]["entries"]] == ["hermes"] and not data["experiment"]
    r = svqa(svqa_bin, root, "list", "slurm")
    assert r.returncode == 0 and r.stdout.startswith("experiment keys:\n  slurm: section") and "\nencoding (" not in r.stdout
    r = svqa(svqa_bin, root, "list", "retrieval")
    assert r.returncode == 0 and r.stdout.startswith("retrieval (") and "\n  internal  # " in r.stdout
    r = svqa(svqa_bin, root, "list", "hermse")
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "did you mean 'hermes'?" in r.stderr


def test_help_names_what_the_report_writes(svqa_bin, root):
    """report.md/.csv/.tex and each figure as PDF, SVG and PNG (app/report/figures.py), not "PNG plots"."""
    line = next(x for x in svqa(svqa_bin, root, "--help").stdout.splitlines() if x.lstrip().startswith("report "))
    assert "report.md/.csv/.tex" in line and "figures (PDF, SVG, PNG)" in line, line
