"""Qwen3-VL: `svqa probe` against Hugging Face (transformers 5.23) on tiny random exports made at test
time: prompt tokens as the HF processor writes them (timestamps as text), interleaved mRoPE
positions equal to get_rope_index, DeepStack's hidden states after each layer, first-token logits
(fp32, ≤ 1e-4) and 20 greedy tokens; bf16 error beside HF's own."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

QUESTION = "What is the color of the object in the video? Best option: ("
LONG = " ".join(["Describe what the person in the kitchen is doing with the red ball before the car moves left."] * 12)

# name → (frames, height, width), fps, question, --tiny-set. Frame sizes the processor keeps
# (multiples of 32 within the tiny pixel limits), so the comparison is of the model; preprocessing
# on its own is in test_preprocess.py.
CASES = {
    "4_frames_fps2": ((4, 128, 160), 2.0, QUESTION, []),
    "1_patch_tied_embeddings": ((2, 64, 64), 1.0, QUESTION,
                                ["text_config.tie_word_embeddings=true", "tie_word_embeddings=true"]),
    "5_frames_odd_grid_fps1.5": ((5, 96, 160), 1.5, QUESTION, []),
    "8_frames_fps0.5": ((8, 160, 96), 0.5, QUESTION, []),
    "long_prompt": ((3, 64, 96), 2.0, LONG, []),
    "3_layers_2_deepstack_narrow_grid": ((6, 32, 224), 1.0, QUESTION,
                                         ["text_config.num_hidden_layers=3", "vision_config.deepstack_visual_indexes=[1,3]"]),
}


def export(root, out, *args):
    r = subprocess.run([sys.executable, "-m", "models.export", "--tiny", "qwen3_vl", "--seed", "0", *args,
                        "--out", str(out)], cwd=root, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out


def hf_reference(root, tmp, export_dir, frames_path, fps, question, steps=20, bf16=False):
    case = tmp / "case.json"
    case.write_text(json.dumps({"export": str(export_dir), "frames": str(frames_path), "fps": fps, "question": question,
                                "steps": steps, "bf16": bf16}))
    vision_deps = root / ".venv" / "hf-vision"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(vision_deps), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, str(root / "tests/python/hf_qwen3_reference.py"), str(case), str(tmp)],
                       capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.splitlines()[-1])


def probe(svqa_bin, export_dir, frames_path, fps, question, tmp, generate=20):
    outs = {k: tmp / f"svqa_{k}.npy" for k in ("logits", "positions", "prompt-ids", "hidden-states")}
    r = subprocess.run([svqa_bin, "probe", "--export", export_dir, "--frames", frames_path, "--prompt", question,
                        "--fps", str(fps), "--generate", str(generate)] +
                       [a for k, path in outs.items() for a in (f"--{k}", path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout), {k: np.load(path) for k, path in outs.items()}


@pytest.fixture(scope="module", params=list(CASES))
def compared(request, root, svqa_bin, tmp_path_factory):
    (n, h, w), fps, question, tiny_set = CASES[request.param]
    tmp = tmp_path_factory.mktemp(request.param)
    out = export(root, tmp / "export", *[a for s in tiny_set for a in ("--tiny-set", s)])
    frames_path = tmp / "frames.npy"
    np.save(frames_path, np.random.default_rng(1).integers(0, 256, (n, h, w, 3), dtype=np.uint8))
    hf = hf_reference(root, tmp, out, frames_path, fps, question)
    ours, arrays = probe(svqa_bin, out, frames_path, fps, question, tmp)
    hf_arrays = {k: np.load(tmp / f"{k}.npy") for k in ("ids", "template_ids", "positions", "logits", "hidden")}
    return ours, arrays, hf, hf_arrays, json.loads((out / "manifest.json").read_text())


def test_prompt_tokens_equal_the_hf_processor(compared):
    ours, arrays, hf, ref, _ = compared
    want = np.where(ref["ids"] == hf["video_token_id"], -1, ref["ids"])
    assert arrays["prompt-ids"].tolist() == want.tolist()
    t, gh, gw = hf["grid"]
    assert ours["visual_tokens"] == t * gh * gw // 4
    # transformers 5.23 replaces only <|video_pad|> in the chat template's
    # <|vision_start|><|video_pad|><|vision_end|>, leaving one extra pair around the whole video;
    # the released processor (and svqa) replaces all three.
    assert len(ref["template_ids"]) == len(ref["ids"]) + 2


def test_interleaved_mrope_positions_equal_get_rope_index(compared):
    _, arrays, _, ref, _ = compared
    assert arrays["positions"].shape == ref["positions"].shape
    assert (arrays["positions"] == ref["positions"]).all()


def test_deepstack_hidden_states_after_each_layer_equal_hf(compared):
    _, arrays, _, ref, manifest = compared
    ours, hf = arrays["hidden-states"], ref["hidden"]
    assert ours.shape == hf.shape == (manifest["text"]["num_layers"], len(ref["ids"]), manifest["text"]["hidden_size"])
    assert manifest["vision"]["deepstack_layers"] >= 2
    for layer in range(manifest["vision"]["deepstack_layers"]):  # the layers DeepStack adds to
        assert np.abs(ours[layer] - hf[layer]).max() <= 1e-5, layer
    assert np.abs(ours - hf).max() <= 1e-4


def test_first_logits_and_20_greedy_tokens_equal_hf(compared):
    ours, arrays, hf, ref, _ = compared
    print(f"max |Δ logits| {np.abs(arrays['logits'] - ref['logits']).max():.2g} (logits up to "
          f"{np.abs(ref['logits']).max():.2g}), hidden states {np.abs(arrays['hidden-states'] - ref['hidden']).max():.2g}")
    assert np.abs(arrays["logits"] - ref["logits"]).max() <= 1e-4
    assert ours["generated_ids"] == hf["greedy"]
    assert len(hf["greedy"]) == 20 or hf["greedy"][-1] in compared[4]["tokens"]["eos"]


def test_bf16_error_beside_hf_own(root, svqa_bin, tmp_path):
    """svqa's bf16 export against HF fp32, printed beside HF bf16 against HF fp32 (same weights)."""
    (n, h, w), fps, question, _ = CASES["4_frames_fps2"]
    fp32 = export(root, tmp_path / "fp32")
    bf16 = export(root, tmp_path / "bf16", "--dtype", "bfloat16")
    frames_path = tmp_path / "frames.npy"
    np.save(frames_path, np.random.default_rng(1).integers(0, 256, (n, h, w, 3), dtype=np.uint8))
    hf_reference(root, tmp_path, fp32, frames_path, fps, question, steps=1, bf16=True)
    _, ours = probe(svqa_bin, bf16, frames_path, fps, question, tmp_path, generate=1)
    want = np.load(tmp_path / "logits.npy")
    ours_err = np.abs(ours["logits"] - want).max()
    hf_err = np.abs(np.load(tmp_path / "bf16_logits.npy") - want).max()
    print(f"bf16 max |Δ logits| vs HF fp32: svqa {ours_err:.3g}, HF bf16 {hf_err:.3g}")
    assert ours_err <= 2 * hf_err + 1e-2
