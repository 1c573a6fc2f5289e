"""The tiny exporter's `--tiny-set`: values that cannot run are refused in one line; LLaVA-OV's
vision image size is carried into the video processor config (and so into the manifest)."""

import json
import subprocess
import sys

import numpy as np


def export(root, out, *args):
    return subprocess.run([sys.executable, "-m", "models.export", *args, "--out", str(out)], cwd=root,
                          capture_output=True, text=True)


def test_tiny_set_that_cannot_run_is_refused_in_one_line(root, tmp_path):
    for arch, setting, message in [
        ("qwen2_5_vl", "text_config.hidden_size=48",
         "vision_config.out_hidden_size (64) must equal text_config.hidden_size (48): the vision tower's tokens go "
         "straight into the text model"),
        ("qwen2_5_vl", "text_config.num_key_value_heads=3",
         "text_config.num_key_value_heads (3) must divide text_config.num_attention_heads (4)"),
        ("llava_onevision", "vision_config.image_size=12",
         "vision_config.image_size (12) must hold at least 2 patches of vision_config.patch_size (8) per side"),
    ]:
        r = export(root, tmp_path / "x", "--tiny", arch, "--tiny-set", setting)
        assert r.returncode == 1, r.stderr
        assert r.stderr.strip().splitlines()[-1] == f"export: --tiny-set: {message}"
        assert not (tmp_path / "x").exists()  # a failed export leaves no folder


def test_llava_image_size_is_carried_into_the_processor(root, svqa_bin, tmp_path):
    out = tmp_path / "export"
    r = export(root, out, "--tiny", "llava_onevision", "--tiny-set", "vision_config.image_size=64")
    assert r.returncode == 0, r.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert (manifest["image"]["height"], manifest["image"]["width"]) == (64, 64)
    assert manifest["vision"]["tokens_per_frame"] == 16  # 8×8 patches pooled to 4×4
    assert json.loads((out / "hf" / "video_preprocessor_config.json").read_text())["size"] == {"height": 64, "width": 64}
    np.save(tmp_path / "frames.npy", np.random.default_rng(0).integers(0, 256, (2, 64, 64, 3), dtype=np.uint8))
    r = subprocess.run([svqa_bin, "probe", "--export", out, "--frames", tmp_path / "frames.npy", "--prompt", "q",
                        "--generate", "1"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["visual_tokens"] == 2 * 16
