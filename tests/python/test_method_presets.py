"""The method presets of experiments/methods/ and the experiments built on them: every preset and every
experiment file validates (grids expand and validate every run), each preset carries its reference's run
(checked on the resolved config, not the file text), the paper variants differ from the code's run in
exactly the settings their papers state, the Qwen3-VL variants differ from their method only in the
backbone (its export and its frames' size) and its prompts (the method's messages in Qwen3-VL's chat template), and compare_methods.yaml is
one run per preset."""

import pathlib
import subprocess
import sys

import pytest
import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
from models.export.manifest import CHAT_TEMPLATES  # noqa: E402

PRESETS = ["rekv", "mukv", "streamkv", "streamkv_paper", "memstream", "memstream_paper", "full_context",
           "fresh_uniform", "fresh_recent", "streamingtom", "infinipot_v", "hermes", "fluxmem", "stc"]


QWEN3_VL_VARIANTS = ["rekv", "mukv", "streamkv", "memstream"]


def resolved(svqa_bin, path):
    r = subprocess.run([svqa_bin, "validate", path, "--dump=set", "--no-paths"], capture_output=True, text=True)
    assert r.returncode == 0, f"{path}: {r.stderr}"
    return yaml.safe_load(r.stdout)


def test_every_preset_and_experiment_validates(svqa_bin, root):
    methods = root / "experiments" / "methods"
    assert {p.stem for p in methods.glob("*.yaml")} >= (set(PRESETS) | {"llava_onevision", "qwen2_5_vl", "qwen3_vl"}
                                                        | {f"{m}_qwen3_vl" for m in QWEN3_VL_VARIANTS})
    files = sorted((root / "experiments").rglob("*.yaml"))
    assert len(files) >= 40
    for f in files:
        grid = "grid" in yaml.safe_load(f.read_text())
        r = subprocess.run([svqa_bin, "grid", f, "--list"] if grid else [svqa_bin, "validate", f, "--no-paths"],
                           cwd=root, capture_output=True, text=True)
        assert r.returncode == 0, f"{f.relative_to(root)}: {r.stderr}"


def test_presets_carry_their_references_run(svqa_bin, root):
    p = {name: resolved(svqa_bin, root / "experiments" / "methods" / f"{name}.yaml") for name in PRESETS}
    rekv_prompt = "<|im_start|>system \nYou are a helpful assistant.<|im_end|><|im_start|>user "
    for name in ("rekv", "mukv", "full_context", "fresh_uniform", "fresh_recent"):
        assert p[name]["stream"]["sink_prompt"] == rekv_prompt, name
        assert p[name]["stream"]["answer_prompt"] == "\n{question}<|im_end|><|im_start|>assistant\n", name
        assert p[name]["runtime"]["dtype"] == "float16" and p[name]["stream"]["chunk_frames"] == 64, name
    infinipot = p["infinipot_v"]  # scripts/run_sample.sh, run_ovu.sh, qwen_inference_ovu.py's defaults
    assert infinipot["encoding"] == {"type": "infinipot_v", "options": {
        "cap_frames": 16, "keep_frames": 12, "tar_ratio": 0.5, "query_ratio": 0.25, "adaptive_pooling": True}}
    assert infinipot["retrieval"]["type"] == "memory_as_is"
    assert (infinipot["runtime"]["dtype"], infinipot["backbone"]["options"]["export"]) == ("bfloat16", "exports/qwen2_5_vl_7b")
    # qwen_inference_ovu.py: qwen-vl-utils' fetch_video at its 2 fps, {"max_frames": 768, "max_pixels": 128 * 28 * 28}
    assert {k: infinipot["stream"][k] for k in ("fps", "frame_step", "frame_times")} == \
        {"fps": 2, "frame_step": "qwen_smart", "frame_times": "presented"}
    assert infinipot["backbone"]["options"]["video_resize"] == \
        {"rule": "qwen_vl_utils", "min_pixels": 0, "max_pixels": 128 * 28 * 28, "total_pixels": 0}
    hermes = p["hermes"]  # load_model's tiers; kv_size (no default released): svqa's 4000
    assert hermes["encoding"] == {"type": "hermes", "options": {
        "budget": 4000, "short_term_ratio": 0.1, "long_term_ratio": 0.3, "max_position_embeddings": 32768}}
    assert (hermes["retrieval"]["type"], hermes["stream"]["position_policy"]) == ("memory_as_is", "original")
    assert hermes["stream"]["sink_prompt"] == rekv_prompt and hermes["runtime"]["dtype"] == "float16"
    mukv = p["mukv"]
    assert mukv["encoding"]["options"]["segment_leftovers"] == "drop"
    assert mukv["stream"]["min_video_frames"] == 15
    assert mukv["retrieval"]["options"]["blocks"] == {"patch": 20, "frame": 32, "segment": 12}
    assert mukv["backbone"]["options"]["export"] == "exports/llava-ov-0.5b"
    streamkv = p["streamkv"]
    assert streamkv["stream"]["sink_prompt"].startswith(rekv_prompt[:-len("<|im_end|><|im_start|>user ")])
    assert "actively track and remember" in streamkv["stream"]["sink_prompt"]
    assert streamkv["stream"]["protocol"] == "reencode_per_question"
    assert (streamkv["encoding"]["options"]["keep_fraction"], streamkv["retrieval"]["options"]["retrieve_size"]) == (0.6, 64)
    assert p["memstream"]["runtime"]["dtype"] == "bfloat16"
    # Mem-Stream's paper: 200-256 tokens per frame-feature (a 2-frame temporal patch of 28 x 28 merged patches)
    assert p["memstream"]["backbone"]["options"]["video_resize"] == \
        {"rule": "processor", "min_pixels": 200 * 28 * 28, "max_pixels": 256 * 28 * 28}
    assert (p["memstream"]["stream"]["frame_step"], p["memstream"]["stream"]["fps"]) == ("reference", 0.5)
    assert p["memstream"]["retrieval"]["options"]["similarity"] == "dot"
    assert p["fresh_uniform"]["encoding"]["options"] == {"sampling": "uniform", "frames": 32}
    assert p["fresh_recent"]["encoding"]["options"] == {"sampling": "recent", "frames": 4}
    # StreamingTOM: the README's defaults (CTR_*, OQM_*), 4-bit groups of one frame each.
    tom = p["streamingtom"]
    assert {k: tom["encoding"]["options"][k] for k in ("retain_tokens", "similarity_threshold", "k", "beta", "n_local")} == \
        {"retain_tokens": 50, "similarity_threshold": 0.9, "k": 7, "beta": 0.6, "n_local": 4800}
    assert (tom["stream"]["kv_codec"], tom["stream"]["kv_codec_group"]) == ("int4", 50)
    assert tom["retrieval"]["options"] == {"retrieve_size": 251, "chunk_size": 1, "similarity": "cosine"}
    assert tom["stream"]["sink_prompt"] == "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n"
    flux = p["fluxmem"]  # ovobench.sh's memory, frames and window; fluxmem.py's drop threshold
    assert flux["encoding"] == {"type": "fluxmem", "options": {
        "short_term_frames": 8, "mid_term_frames": 64, "direct_drop_similarity": 0.8, "max_frames": 256}}
    assert flux["retrieval"]["type"] == "full_context"
    assert (flux["stream"]["fps"], flux["stream"]["context_window_s"], flux["stream"]["max_new_tokens"]) == (1, 256, 128)
    assert (flux["runtime"]["dtype"], flux["stream"]["sink_prompt"]) == ("bfloat16", "<default>")


def differences(a, b, at=""):
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            out += differences(a.get(k), b.get(k), f"{at}.{k}" if at else k)
        return out
    return [] if a == b else [at]


@pytest.mark.parametrize("paper,code,expected", [
    ("streamkv_paper", "streamkv", {"encoding.options.keep_fraction", "retrieval.options.retrieve_size",
                                    "retrieval.options.retrieve_local"}),
    ("memstream_paper", "memstream", {"retrieval.options.similarity"}),
])
def test_paper_presets_differ_only_where_the_paper_says(svqa_bin, root, paper, code, expected):
    methods = root / "experiments" / "methods"
    a, b = resolved(svqa_bin, methods / f"{paper}.yaml"), resolved(svqa_bin, methods / f"{code}.yaml")
    assert set(differences(a, b)) - {"name", "label"} == expected  # a paper preset has its own display name


def test_compare_methods_is_one_run_per_preset(svqa_bin, root, tmp_path):
    r = subprocess.run([svqa_bin, "grid", root / "experiments/compare_methods.yaml", "--list"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    names = sorted(line.split()[2] for line in r.stdout.splitlines() if line.strip())  # index, mark, name, dir
    assert names == sorted(f"compare_methods__{p}" for p in
                           ["rekv", "memstream", "streamkv", "mukv", "streamingtom", "full_context", "fresh_uniform",
                            "fresh_recent", "infinipot_v", "hermes", "fluxmem", "stc"])
    # A preset that is not there: one located line naming the axis value and where it was looked for.
    bad = tmp_path / "bad.yaml"
    bad.write_text("grid:\n  axes:\n    _base_: [methods/nowhere.yaml]\n")
    r = subprocess.run([svqa_bin, "grid", bad, "--list"], capture_output=True, text=True)
    assert r.returncode == 2
    assert "grid.axes._base_[0]: file not found: 'methods/nowhere.yaml'" in r.stderr, r.stderr


def chatml_system(sink):
    """The system message of a LLaVA-OneVision preset's sink prompt (ReKV's "<|im_start|>system \\n…")."""
    head = "<|im_start|>system \n"
    assert sink.startswith(head) and sink.endswith("<|im_end|><|im_start|>user "), sink
    return sink[len(head):-len("<|im_end|><|im_start|>user ")]


def test_qwen3_vl_base_is_its_chat_template(svqa_bin, root):
    base = resolved(svqa_bin, root / "experiments" / "methods" / "qwen3_vl.yaml")["stream"]
    assert base["sink_prompt"] + "{video}" + base["answer_prompt"] == CHAT_TEMPLATES["qwen3_vl"]


@pytest.mark.parametrize("method", QWEN3_VL_VARIANTS)
def test_qwen3_vl_variants_are_their_method_in_qwen3_vls_template(svqa_bin, root, method):
    methods = root / "experiments" / "methods"
    variant, original = resolved(svqa_bin, methods / f"{method}_qwen3_vl.yaml"), resolved(svqa_bin, methods / f"{method}.yaml")
    qwen3 = resolved(svqa_bin, methods / "qwen3_vl.yaml")
    qwen3_backbone = qwen3["backbone"]
    assert qwen3_backbone["options"]["video_resize"] == {"rule": "qwen_vl_utils", "min_pixels": 0, "max_pixels": 0,
                                                         "total_pixels": 0}  # Qwen3-VL's released pipeline
    assert variant["backbone"] == ({"type": "torchscript", "options": {**qwen3_backbone["options"],
                                                                       "export": "exports/qwen3_vl_2b"}}
                                   if method == "mukv" else qwen3_backbone)
    assert variant["runtime"]["dtype"] == "bfloat16"
    assert variant["label"] == f"{original['label']} (Qwen3-VL)"
    resize = {"backbone.options.video_resize"} | {f"backbone.options.video_resize.{k}"
                                                  for k in ("rule", "min_pixels", "max_pixels", "total_pixels")}
    changed = {"name", "label", "backbone.options.export", "runtime.dtype", "stream.sink_prompt", "stream.answer_prompt",
               *resize}
    assert set(differences(variant, original)) <= changed
    if method == "memstream":  # the backbone's own template, as the Qwen2.5-VL preset's <default>
        assert (variant["stream"]["sink_prompt"], variant["stream"]["answer_prompt"]) == \
            (qwen3["stream"]["sink_prompt"], qwen3["stream"]["answer_prompt"])
        return
    # The method's system message and user text after the video, written as Qwen3-VL's template writes them.
    system = chatml_system(original["stream"]["sink_prompt"])
    assert variant["stream"]["sink_prompt"] == f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n"
    user_after_video = original["stream"]["answer_prompt"].removesuffix("<|im_end|><|im_start|>assistant\n")
    assert variant["stream"]["answer_prompt"] == user_after_video + "<|im_end|>\n<|im_start|>assistant\n"


def test_every_preset_names_its_references_sampling_and_resolution(root):
    """Each preset says, in a `# Frames` comment, how its reference samples and sizes frames, and the table of
    docs/video_input.md has a row naming it (by name or by a `*` pattern)."""
    import fnmatch
    import re

    doc = (root / "docs" / "video_input.md").read_text()
    section = doc.split("## Each reference's sampling and resolution", 1)[1].split("\n## ", 1)[0]
    named = [re.findall(r"`([\w*]+\.yaml)`", row.split("|")[1]) for row in section.splitlines() if row.startswith("| `")]
    patterns = [p for row in named for p in row]
    for f in sorted((root / "experiments" / "methods").glob("*.yaml")):
        assert any(line.startswith("# Frames") for line in f.read_text().splitlines()), f.name
        assert any(fnmatch.fnmatch(f.name, p) for p in patterns), f"{f.name}: no row in docs/video_input.md"
