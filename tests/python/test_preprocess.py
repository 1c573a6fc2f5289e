"""`svqa frames --preprocess` against the Hugging Face video processors of transformers 5.23
(LlavaOnevisionVideoProcessor, Qwen2VLVideoProcessor, Qwen3VLVideoProcessor) and CLIP's image processor (shortest edge, centre
crop) on random frames: downscaling, upscaling, no resize, non-square, odd frame counts, Python's
half-to-even rounding in smart_resize, odd crop offsets."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

CLIP_MEAN, CLIP_STD = [0.48145466, 0.4578275, 0.40821073], [0.26862954, 0.26130258, 0.27577711]
SIGLIP = dict(mean=[0.5, 0.5, 0.5], std=[0.5, 0.5, 0.5])


def fixed(height, width, **norm):
    return dict(resize="fixed", height=height, width=width, rescale_factor=1 / 255, **(norm or SIGLIP))


def qwen(min_pixels, max_pixels, patch_size=14, merge_size=2, temporal_patch_size=2):
    return dict(resize="qwen_smart", min_pixels=min_pixels, max_pixels=max_pixels, patch_size=patch_size,
                merge_size=merge_size, temporal_patch_size=temporal_patch_size, rescale_factor=1 / 255,
                mean=CLIP_MEAN, std=CLIP_STD)


def qwen3(min_pixels, max_pixels):
    """Qwen3-VL's video processor: patch 16, pixel limits over all frames (t · h · w), SigLIP norm."""
    return dict(resize="qwen3_smart", min_pixels=min_pixels, max_pixels=max_pixels, patch_size=16, merge_size=2,
                temporal_patch_size=2, rescale_factor=1 / 255, **SIGLIP)


def clip_crop(edge, crop):
    return dict(resize="shortest_edge_crop", shortest_edge=edge, height=crop, width=crop, rescale_factor=1 / 255,
                mean=CLIP_MEAN, std=CLIP_STD)


# name → (frames F, H, W; image spec). Sizes chosen so every branch of the resize rules runs.
CASES = {
    "llava_down_nonsquare_source": ((3, 64, 80), fixed(48, 48)),
    "llava_up": ((2, 30, 20), fixed(48, 48)),
    "llava_same_size": ((1, 48, 48), fixed(48, 48)),
    "llava_nonsquare_target_clip": ((2, 200, 150), fixed(40, 56, mean=CLIP_MEAN, std=CLIP_STD)),
    "llava_up_and_down": ((2, 37, 300), fixed(48, 48)),
    "qwen_round_odd_frames": ((3, 90, 130), qwen(28 * 28 * 4, 28 * 28 * 16)),
    "qwen_min_pixels_upscale_one_frame": ((1, 30, 40), qwen(28 * 28 * 8, 28 * 28 * 16)),
    "qwen_already_aligned": ((4, 56, 84), qwen(28 * 28 * 4, 28 * 28 * 16)),
    "qwen_max_pixels_downscale_five_frames": ((5, 300, 200), qwen(28 * 28 * 4, 28 * 28 * 16)),
    "qwen_halves_round_to_even": ((2, 42, 70), qwen(28 * 28 * 4, 28 * 28 * 16)),  # 1.5 → 2, 2.5 → 2
    "qwen_patch8_tp3": ((4, 50, 70), qwen(16 * 16, 16 * 16 * 20, patch_size=8, temporal_patch_size=3)),
    # Qwen3-VL: the limits count t' · h · w (t' = frames rounded to whole temporal patches).
    "qwen3_max_pixels_over_frames": ((6, 200, 300), qwen3(2 * 64 * 64, 8 * 160 * 160)),
    "qwen3_min_pixels_upscale": ((2, 40, 60), qwen3(2 * 64 * 64, 8 * 160 * 160)),
    "qwen3_odd_frames_round_to_even": ((3, 96, 128), qwen3(2 * 64 * 64, 8 * 160 * 160)),
    "qwen3_tiny_side_scaled_up_first": ((2, 20, 200), qwen3(2 * 32 * 32, 8 * 160 * 160)),
    "qwen3_real_limits_upscale": ((4, 80, 112), qwen3(128 * 32 * 32, 32 * 32 * 768 * 32)),
    "clip_wide_down_and_crop": ((2, 90, 160), clip_crop(48, 48)),
    "clip_tall_up_and_crop": ((1, 70, 30), clip_crop(40, 36)),
    "clip_odd_offsets": ((2, 51, 77), clip_crop(33, 33)),
}


@pytest.fixture(scope="module")
def compared(svqa_bin, root, tmp_path_factory):
    """Runs every case through svqa and, in one process, through HF; returns name → results."""
    tmp = tmp_path_factory.mktemp("preprocess")
    rng = np.random.default_rng(0)
    ref_cases, ours = [], {}
    for name, (shape, image) in CASES.items():
        frames, spec = tmp / f"{name}.npy", tmp / f"{name}.json"
        np.save(frames, rng.integers(0, 256, (*shape, 3), dtype=np.uint8))
        spec.write_text(json.dumps({"image": image}))
        r = subprocess.run([str(svqa_bin), "frames", str(frames), "--preprocess", str(spec), "--out",
                            str(tmp / f"{name}.svqa.npy")], cwd=root, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        ours[name] = json.loads(r.stdout)
        ref_cases.append({"frames": str(frames), "spec": str(spec), "out": str(tmp / f"{name}.hf.npy")})
    (tmp / "cases.json").write_text(json.dumps(ref_cases))

    vision_deps = root / ".venv" / "hf-vision"
    if not (vision_deps / "torchvision").is_dir():
        pytest.fail(f"{vision_deps} has no torchvision: run scripts/setup.sh")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(vision_deps), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, str(root / "tests/python/hf_video_reference.py"), str(tmp / "cases.json")],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    grids = json.loads(r.stdout.splitlines()[-1])
    return {name: (ours[name], np.load(tmp / f"{name}.svqa.npy"), grid, np.load(tmp / f"{name}.hf.npy"))
            for name, grid in zip(CASES, grids)}


@pytest.mark.parametrize("name", CASES)
def test_pixels_match_hugging_face(compared, name):
    report, pixels, hf_grid, hf_pixels = compared[name]
    assert pixels.dtype == np.float32 and pixels.shape == hf_pixels.shape
    assert report["pixels_shape"] == list(hf_pixels.shape)
    # Same LibTorch kernels (antialiased bicubic on uint8, then float32 normalisation): measured 0.
    assert np.abs(pixels - hf_pixels).max() <= 1e-2
    if hf_grid is not None:
        assert report["grid_thw"] == hf_grid
    else:
        assert "grid_thw" not in report


def svqa_frames(svqa_bin, root, *args):
    return subprocess.run([str(svqa_bin), "frames", *map(str, args)], cwd=root, capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("image, message", [
    ({"resize": "fixed", "height": 48}, "image.width: missing (expected a positive integer)"),
    ({"resize": "fixed", "height": 48, "width": 0}, "image.width: expected a positive integer, got 0"),
    ({"resize": "square", "height": 48, "width": 48},
     'image.resize: expected "fixed", "qwen_smart", "qwen3_smart" or "shortest_edge_crop", got "square"'),
    ({"resize": "shortest_edge_crop", "height": 48, "width": 48}, "image.shortest_edge: missing"),
    ({"resize": "fixed", "height": 48, "width": 48, "interpolation": "nearest"},
     'image.interpolation: expected "bicubic" or "bilinear", got "nearest"'),
    ({"resize": "qwen_smart", "min_pixels": 4, "max_pixels": 8, "interpolation": "bilinear"},
     'image.interpolation: expected no such key with resize "qwen_smart"'),
    ({"resize": "fixed", "height": 48, "width": 48, "mean": [0.5, 0.5]},
     "image.mean: expected a list of 3 numbers (one per RGB channel), got [0.5,0.5]"),
    ({"resize": "fixed", "height": 48, "width": 48, "min_pixels": 4},
     'image.min_pixels: expected no such key with resize "fixed", got 4'),
    ({"resize": "qwen_smart", "min_pixels": 4, "max_pixels": 8, "factor": 28},  # merge_size defaults to 1
     "image.factor: expected patch_size * merge_size = 14, got 28"),
    ({"resize": "qwen_smart", "min_pixels": 400, "max_pixels": 8}, "image.max_pixels: expected at least min_pixels"),
    ({"resize": "fixed", "height": 48, "width": 48, "hieght": 4}, "image.hieght: unknown key"),
])
def test_bad_image_spec_is_one_line_naming_file_and_key(svqa_bin, root, tmp_path, image, message):
    frames, spec = tmp_path / "f.npy", tmp_path / "spec.json"
    np.save(frames, np.zeros((1, 8, 8, 3), np.uint8))
    spec.write_text(json.dumps({"image": image}))
    r = svqa_frames(svqa_bin, root, frames, "--preprocess", spec)
    assert r.returncode == 1
    assert r.stderr.startswith(f"svqa frames: error: {spec}: {message}"), r.stderr
    assert r.stderr.count("\n") == 1


def test_spec_file_without_image_object(svqa_bin, root, tmp_path):
    frames, spec = tmp_path / "f.npy", tmp_path / "manifest.json"
    np.save(frames, np.zeros((1, 8, 8, 3), np.uint8))
    spec.write_text(json.dumps({"format": 1}))
    r = svqa_frames(svqa_bin, root, frames, "--preprocess", spec)
    assert (r.returncode, r.stderr) == (1, f'svqa frames: error: {spec}: image: missing (expected an object with '
                                           f'the backbone\'s "image" spec)\n')
