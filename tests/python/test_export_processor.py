"""`python -m models.export --model DIR` reads the video processor where transformers 5 saves it (one
processor_config.json with a nested "video_processor"), before the older files, and guesses nothing:
a checkpoint without processor settings, or without a mean, std or size, is refused naming what is
missing (the old exporter took CLIP's mean/std for it, pixels off by up to 1.15)."""

import json
import shutil
import subprocess
import sys

import pytest

from backbone_reference import ROOT

HALF = [0.5, 0.5, 0.5]


@pytest.fixture(scope="module")
def checkpoint(tiny_export, tmp_path_factory):
    """A tiny LLaVA-OV Hugging Face checkpoint with no processor file: each test adds its own."""
    base = tmp_path_factory.mktemp("ckpt")
    hf = base / "hf"
    shutil.copytree(tiny_export("llava_onevision") / "hf", hf)
    saved = json.loads((hf / "video_preprocessor_config.json").read_text())
    (hf / "video_preprocessor_config.json").unlink()
    assert saved["image_mean"] == HALF and saved["image_std"] == HALF  # LLaVA-OV's, not CLIP's
    return hf, saved


def export(hf, out):
    return subprocess.run([sys.executable, "-m", "models.export", "--model", str(hf), "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True)


def with_files(hf, tmp_path, files):
    ckpt = tmp_path / "hf"
    shutil.copytree(hf, ckpt)
    for name, content in files.items():
        (ckpt / name).write_text(json.dumps(content))
    return ckpt


def test_a_transformers_5_processor_config_gives_the_saved_mean_and_std(checkpoint, tmp_path):
    hf, saved = checkpoint
    nested = {"processor_class": "LlavaOnevisionProcessor", "video_processor": saved,
              "image_processor": {**saved, "image_mean": [0.1] * 3, "image_std": [0.2] * 3}}
    # An older, different file beside it loses to the nested entry, as in transformers 5.
    ckpt = with_files(hf, tmp_path, {"processor_config.json": nested,
                                     "preprocessor_config.json": {**saved, "image_mean": [0.3] * 3}})
    r = export(ckpt, tmp_path / "export")
    assert r.returncode == 0, r.stderr
    image = json.loads((tmp_path / "export" / "manifest.json").read_text())["image"]
    assert image["mean"] == HALF and image["std"] == HALF
    assert (image["height"], image["width"]) == (saved["size"]["height"], saved["size"]["width"])


def test_a_checkpoint_without_processor_settings_is_refused_naming_them(checkpoint, tmp_path):
    hf, _ = checkpoint
    r = export(hf, tmp_path / "export")
    assert r.returncode != 0 and not (tmp_path / "export" / "manifest.json").exists()
    line = r.stderr.strip().splitlines()[-1]
    assert "no video processor settings" in line and "processor_config.json" in line
    assert "video_preprocessor_config.json" in line and "preprocessor_config.json" in line


@pytest.mark.parametrize("missing", ["image_mean", "image_std", "size"])
def test_a_processor_config_without_mean_std_or_size_is_refused_naming_the_key(checkpoint, tmp_path, missing):
    hf, saved = checkpoint
    partial = {k: v for k, v in saved.items() if k != missing}
    ckpt = with_files(hf, tmp_path, {"processor_config.json": {"video_processor": partial}})
    r = export(ckpt, tmp_path / "export")
    assert r.returncode != 0 and not (tmp_path / "export" / "manifest.json").exists()
    line = r.stderr.strip().splitlines()[-1]
    assert f'no "{missing}"' in line and "processor_config.json (video_processor)" in line


def test_a_missing_rescale_factor_is_the_class_constant_said_on_stderr(checkpoint, tmp_path):
    hf, saved = checkpoint
    partial = {k: v for k, v in saved.items() if k != "rescale_factor"}
    ckpt = with_files(hf, tmp_path, {"video_preprocessor_config.json": partial})
    r = export(ckpt, tmp_path / "export")
    assert r.returncode == 0, r.stderr
    assert 'no "rescale_factor": using 0.00392156' in r.stderr
    assert json.loads((tmp_path / "export" / "manifest.json").read_text())["image"]["rescale_factor"] == 1 / 255



def qwen3_checkpoint(tmp_path, vision, processor):
    """config.json and video_preprocessor_config.json of a Qwen3-VL checkpoint, nothing else: the
    checks below come before any weight is read."""
    ckpt = tmp_path / "qwen3"
    ckpt.mkdir()
    (ckpt / "config.json").write_text(json.dumps({"model_type": "qwen3_vl", "vision_config": vision}))
    sizes = {"vision_config": {"patch_size": 16, "temporal_patch_size": 2, "spatial_merge_size": 2}}
    saved = {**exporter().tiny.video_processor_config("qwen3_vl", sizes), **processor}
    (ckpt / "video_preprocessor_config.json").write_text(json.dumps(saved))
    return ckpt


def exporter():
    """models.export's main, run in this process (its refusals are SystemExit): no interpreter and
    transformers import per case."""
    sys.path.insert(0, str(ROOT))
    import models.export.__main__ as main

    return main


def refusal(*argv):
    with pytest.raises(SystemExit) as e:
        exporter().main(list(map(str, argv)))
    return str(e.value)


@pytest.mark.parametrize("processor, vision, named", [
    ({"patch_size": 14}, {"patch_size": 16}, '"patch_size" 14 disagrees with {ckpt}/config.json vision_config.patch_size 16'),
    ({"merge_size": 1}, {}, '"merge_size" 1 disagrees with {ckpt}/config.json vision_config.spatial_merge_size 2'),
    ({"temporal_patch_size": 1}, {}, '"temporal_patch_size" 1 disagrees with {ckpt}/config.json '
                                     'vision_config.temporal_patch_size 2'),
])
def test_a_processor_that_cuts_other_patches_than_the_vision_config_is_refused(tmp_path, processor, vision, named):
    ckpt = qwen3_checkpoint(tmp_path, vision, processor)
    line = refusal("--model", ckpt, "--out", tmp_path / "export")
    assert line.startswith(f"export: {ckpt}/video_preprocessor_config.json: ") and named.format(ckpt=ckpt) in line
    assert not (tmp_path / "export" / "manifest.json").exists()


def test_a_merge_size_other_than_2_is_refused_before_tracing(tmp_path):
    ckpt = qwen3_checkpoint(tmp_path, {"spatial_merge_size": 3}, {"merge_size": 3})
    line = refusal("--model", ckpt, "--out", tmp_path / "export")
    assert line.startswith(f"export: {ckpt}/config.json: vision_config.spatial_merge_size 3: the exporter traces "
                           "and checks 2 only")
    line = refusal("--tiny", "qwen3_vl", "--tiny-set", "vision_config.spatial_merge_size=3", "--out", tmp_path / "tiny")
    assert line.startswith("export: --tiny config: vision_config.spatial_merge_size 3: the exporter traces and "
                           "checks 2 only")
    assert not (tmp_path / "tiny" / "manifest.json").exists()
