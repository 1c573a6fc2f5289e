"""backbone.options.video_resize in a run: the tiny Qwen2.5-VL export's frames sized by qwen-vl-utils'
fetch_video rule or by bounds the preset sets (fewer tokens per temporal patch, as the rule gives), and
the settings a run cannot honour refused in one line naming the key."""

import json
import subprocess

import numpy as np

FRAMES = (8, 112, 112)  # 112 x 112: 16 tokens per temporal patch within the tiny export's bounds (56² to 168²)


def run(svqa_bin, root, tmp_path, export, video_resize):
    np.save(tmp_path / "v.npy", np.random.default_rng(0).integers(0, 256, FRAMES + (3,), dtype=np.uint8))
    streams = {"streams": [{"id": "v", "video": "v.npy", "questions": [
        {"id": "q", "time": 3.9, "question": "What is shown?", "options": ["a", "b"], "answer": "a"}]}]}
    (tmp_path / "streams.json").write_text(json.dumps(streams))
    (tmp_path / "exp.yaml").write_text(f"""
name: resize
backbone: {{type: torchscript, options: {{export: {export}, video_resize: {video_resize}}}}}
encoding: {{type: rekv_sliding_window, options: {{n_local: 2000}}}}
retrieval: {{type: full_context}}
benchmark: {{type: stream_list, options: {{annotations: {tmp_path / 'streams.json'}}}}}
stream: {{fps: 2, chunk_frames: 8, max_new_tokens: 1}}
output: {{dir: {tmp_path / 'results'}}}
""")
    return subprocess.run([str(svqa_bin), "run", str(tmp_path / "exp.yaml")], cwd=root, capture_output=True,
                          text=True, timeout=300)


def memory_tokens(tmp_path):
    (line,) = (tmp_path / "results" / "resize" / "predictions.jsonl").read_text().splitlines()
    return json.loads(line)["memory"]["tokens"]


def test_a_preset_sizes_qwen_frames_by_qwen_vl_utils_or_its_own_bounds(svqa_bin, root, tiny_export, tmp_path):
    export = tiny_export("qwen2_5_vl")
    sizes = {}
    for name, video_resize in {
        "export": "{}",
        # fetch_video: max_pixels 784 → 28 x 28, then the processor's min_pixels 56² → 56 x 56: 4 tokens
        "qwen_vl_utils": "{rule: qwen_vl_utils, min_pixels: 784, max_pixels: 784}",
        # the processor's own rule within 56² to 84²: 84 x 84, 9 tokens
        "processor": "{rule: processor, max_pixels: 7056}",
    }.items():
        (tmp_path / name).mkdir()
        r = run(svqa_bin, root, tmp_path / name, export, video_resize)
        assert r.returncode == 0, r.stderr
        sizes[name] = memory_tokens(tmp_path / name)
    per_patch = {k: v // (FRAMES[0] // 2) for k, v in sizes.items()}
    assert per_patch == {"export": 16, "qwen_vl_utils": 4, "processor": 9}, sizes


def test_video_resize_on_a_fixed_size_export_is_one_line_naming_the_key(svqa_bin, root, tiny_export, tmp_path):
    r = run(svqa_bin, root, tmp_path, tiny_export("llava_onevision"), "{rule: qwen_vl_utils}")
    assert r.returncode != 0
    line = [x for x in r.stderr.splitlines() if "video_resize" in x]
    assert len(line) == 1 and "sizes Qwen frames only" in line[0] and "manifest.json" in line[0], r.stderr


def test_total_pixels_without_the_qwen_vl_utils_rule_is_refused_at_validation(svqa_bin, root, tiny_export, tmp_path):
    run(svqa_bin, root, tmp_path, tiny_export("qwen2_5_vl"), "{total_pixels: 1000}")
    r = subprocess.run([str(svqa_bin), "validate", str(tmp_path / "exp.yaml")], cwd=root, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "backbone.options.video_resize.total_pixels: only with rule: qwen_vl_utils" in r.stdout + r.stderr
