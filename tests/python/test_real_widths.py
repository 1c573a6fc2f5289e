"""The `--model HF_DIR` export path, the one every user takes, on checkpoints with the real widths
of LLaVA-OneVision-0.5B and Qwen2.5-VL-3B (random weights, 2 text layers and 2 vision layers to fit
CI): config.json, processor configs, special-token ids and generation config written as the real
repositories ship them (../shared/reference/backbones.md, the model cards), the weights saved with
save_pretrained in bfloat16. The export must keep every width, and `svqa probe` on real-sized frames
must match the Hugging Face model (fp32): logits and greedy tokens.

Selected alone with `-m real_widths`; part of the default test command."""

import json
import resource
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest
import torch

from backbone_reference import ROOT, hf_greedy, pixel_values, prompt_ids, video_token_count
from models.export.real_checkpoints import CHECKPOINTS, make_checkpoint

pytestmark = pytest.mark.real_widths

QUESTION = "What happens in the video? Best option: ("


@pytest.fixture(scope="module", params=list(CHECKPOINTS))
def real(request, tmp_path_factory):
    architecture = request.param
    base = tmp_path_factory.mktemp(architecture)
    cls = make_checkpoint(architecture, base / "hf")
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "models.export", "--model", str(base / "hf"), "--out", str(base / "export")],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20  # KiB → GiB, the largest child so far
    print(f"\n{architecture}: export took {time.perf_counter() - t0:.1f} s, peak RSS {peak:.1f} GiB")
    yield architecture, base, cls
    shutil.rmtree(base)  # about 3 GB for Qwen2.5-VL-3B's widths


def test_export_keeps_the_real_widths(real):
    architecture, base, _ = real
    manifest = json.loads((base / "export" / "manifest.json").read_text())
    text = manifest["text"]
    if architecture == "llava_onevision":
        assert (text["hidden_size"], text["num_heads"], text["num_kv_heads"], text["head_dim"]) == (896, 14, 2, 64)
        image = manifest["image"]
        assert (image["resize"], image["height"], image["width"], image["mean"]) == ("fixed", 384, 384, [0.5] * 3)
        assert manifest["vision"]["tokens_per_frame"] == 196  # 27×27 patches pooled to 14×14
        assert manifest["tokens"]["eos"] == [151645]
    else:
        assert (text["hidden_size"], text["num_heads"], text["num_kv_heads"], text["head_dim"]) == (2048, 16, 2, 128)
        assert text["mrope_section"] == [16, 24, 24]
        image = manifest["image"]
        assert (image["min_pixels"], image["max_pixels"], image["factor"]) == (3136, 12845056, 28)
        assert manifest["vision"]["head_dim"] == 80 and manifest["vision"]["window_size"] == 112
        assert manifest["tokens"]["eos"] == [151643, 151645]
    assert (text["vocab_size"], text["num_layers"], text["rope_theta"]) == (151936, 2, 1000000.0)


def test_probe_on_real_sized_frames_equals_hugging_face(real, svqa_bin):
    architecture, base, cls = real
    export = base / "export"
    frames = np.random.default_rng(0).integers(0, 256, size=CHECKPOINTS[architecture]["frames"] + (3,), dtype=np.uint8)
    np.save(base / "frames.npy", frames)
    steps = 4
    r = subprocess.run([svqa_bin, "probe", "--export", export, "--frames", base / "frames.npy", "--prompt", QUESTION,
                        "--fps", "2", "--logits", base / "logits.npy", "--generate", str(steps)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["visual_tokens"] == (2 * 196 if architecture == "llava_onevision" else 196)

    from tokenizers import Tokenizer

    manifest = json.loads((export / "manifest.json").read_text())
    model = cls.from_pretrained(base / "hf", dtype=torch.float32).eval()
    tok = Tokenizer.from_file(str(base / "hf" / "tokenizer.json"))
    inputs = pixel_values(manifest, frames)
    ids = prompt_ids(manifest, tok, QUESTION, video_token_count(manifest, inputs, len(frames)))
    extra = {"logits_to_keep": 1}
    if architecture == "qwen2_5_vl":
        extra["second_per_grid_ts"] = torch.tensor([2 / 2.0])
    hf_logits, hf_ids = hf_greedy(model, manifest, ids, inputs, steps, extra)
    logits = np.load(base / "logits.npy")
    assert out["prompt_tokens"] == len(ids)
    print(f"\n{architecture}: {len(ids)} prompt tokens, max |Δ logits| = {np.abs(logits - hf_logits).max():.2g} "
          f"(logits up to {np.abs(hf_logits).max():.2g}), probe {out['seconds']:.1f} s")
    assert np.abs(logits - hf_logits).max() <= 1e-3 * max(1.0, np.abs(hf_logits).max())
    assert out["generated_ids"] == hf_ids
