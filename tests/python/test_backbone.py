"""C++ full-context path (`svqa probe`) against the Hugging Face model on tiny random exports of
both architectures: same logits (fp32, ≤ 1e-4), same 20 greedy tokens, same mRoPE positions."""

import json
import shutil
import subprocess

import numpy as np
import pytest
import torch

from backbone_reference import (hf_greedy, load_hf, original_qwen_rope_index, pixel_values, prompt_ids,
                                video_token_count)

QUESTION = "What is the color of the object in the video? Best option: ("
# Frame sizes the processors keep as they are (48×48 fixed; 140×168 is 28-aligned and within the
# tiny Qwen limits), so the pixels compared here are the model inputs, not resampling.
FRAMES = {"llava_onevision": (4, 48, 48), "qwen2_5_vl": (6, 140, 168)}


@pytest.fixture(scope="module", params=["llava_onevision", "qwen2_5_vl"])
def tiny(request, tiny_export):
    out = tiny_export(request.param)
    n, h, w = FRAMES[request.param]
    frames = np.random.default_rng(1).integers(0, 256, size=(n, h, w, 3), dtype=np.uint8)
    frames_path = out.parent / "frames.npy"
    np.save(frames_path, frames)
    return request.param, out, frames, frames_path


def probe(svqa_bin, export, frames_path, tmp_path, fps=2.0, generate=20):
    logits, positions = tmp_path / "logits.npy", tmp_path / "positions.npy"
    r = subprocess.run([svqa_bin, "probe", "--export", export, "--frames", frames_path, "--prompt", QUESTION,
                        "--fps", str(fps), "--logits", logits, "--positions", positions, "--generate", str(generate)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout), np.load(logits), np.load(positions)


def test_logits_and_greedy_tokens_equal_hf(tiny, svqa_bin, tmp_path):
    arch, export, frames, frames_path = tiny
    out, logits, _ = probe(svqa_bin, export, frames_path, tmp_path)
    manifest, model, tok = load_hf(export)
    inputs = pixel_values(manifest, frames)
    ids = prompt_ids(manifest, tok, QUESTION, video_token_count(manifest, inputs, len(frames)))
    extra = {"second_per_grid_ts": torch.tensor([2 / 2.0])} if arch == "qwen2_5_vl" else {}
    hf_logits, hf_ids = hf_greedy(model, manifest, ids, inputs, 20, extra)

    assert out["prompt_tokens"] == len(ids)
    assert np.abs(logits - hf_logits).max() <= 1e-4
    assert out["generated_ids"] == hf_ids
    assert len(hf_ids) == 20 or hf_ids[-1] in manifest["tokens"]["eos"]


def test_qwen_positions_equal_hf_get_rope_index(tiny_export, svqa_bin, tmp_path):
    export = tiny_export("qwen2_5_vl")
    frames = np.random.default_rng(1).integers(0, 256, size=FRAMES["qwen2_5_vl"] + (3,), dtype=np.uint8)
    frames_path = tmp_path / "frames.npy"
    np.save(frames_path, frames)
    manifest, model, tok = load_hf(export)
    inputs = pixel_values(manifest, frames)
    grid = inputs["video_grid_thw"]
    assert int(grid[0, 0]) >= 3  # ≥ 3 temporal patches
    n_video = video_token_count(manifest, inputs, len(frames))
    ids = torch.tensor([prompt_ids(manifest, tok, QUESTION, n_video)])
    video_id = tok.token_to_id("<|video_pad|>")
    n_before = int((ids[0] == video_id).nonzero()[0])
    types = (ids == video_id).int() * 2

    for fps in (2.0, 0.5):
        _, _, ours = probe(svqa_bin, export, frames_path, tmp_path, fps=fps, generate=1)
        hf, _ = model.model.get_rope_index(ids, types, video_grid_thw=grid,
                                           second_per_grid_ts=torch.tensor([2 / fps]))
        hf = hf[:, 0].numpy()
        assert ours.shape == hf.shape
        # Text before and the video's (t, h, w) grid: identical to transformers 5.23.
        assert (ours[:, :n_before + n_video] == hf[:, :n_before + n_video]).all()
        interval = manifest["vision"]["tokens_per_second"] * 2 / fps
        llm_grid = (int(grid[0, 0]), int(grid[0, 1]) // 2, int(grid[0, 2]) // 2)
        released = original_qwen_rope_index(n_before, llm_grid, interval, ids.shape[1] - n_before - n_video)
        # Text after: one past the largest position, as the model was trained and as HF's own
        # rope_deltas assume when decoding. transformers 5.23 instead restarts after the video's
        # spatial extent, which differs once the temporal positions run past it (fps 0.5 here).
        assert (ours == released).all()
        if fps == 2.0:
            assert (ours == hf).all()
        else:
            assert not (ours == hf).all()


def test_export_errors_are_one_clear_line(tiny, svqa_bin, tmp_path):
    arch, export, _, frames_path = tiny
    broken = tmp_path / "broken"
    shutil.copytree(export, broken, ignore=shutil.ignore_patterns("hf"))

    def fails_with(*expected):
        r = subprocess.run([svqa_bin, "probe", "--export", broken, "--frames", frames_path, "--prompt", "q"],
                           capture_output=True, text=True)
        assert r.returncode == 1
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1, r.stderr
        for e in expected:
            assert e in lines[0], lines[0]

    (broken / "layers" / "001.pt").rename(broken / "layers" / "001.pt.bak")
    fails_with("layers/001.pt: missing", "files.layers[1]")
    (broken / "layers" / "001.pt.bak").rename(broken / "layers" / "001.pt")

    manifest = json.loads((broken / "manifest.json").read_text())
    for key, value, expected in [("format_version", 99, "format_version: this svqa reads version 1"),
                                 ("architecture", "llama", "architecture: unknown 'llama'")]:
        (broken / "manifest.json").write_text(json.dumps({**manifest, key: value}))
        fails_with("manifest.json", expected)
    (broken / "manifest.json").write_text(json.dumps(manifest))

    (broken / "text.pt").write_bytes(b"not a zip archive")
    fails_with("text.pt: not a loadable TorchScript file")

    shutil.rmtree(broken)
    fails_with("export directory not found")


def foreign_layer(path, num_key_value_heads, dtype=torch.float32):
    """A decoder layer traced from another (Qwen2) model, as an export of it would hold."""
    import transformers
    from models.export.wrappers import DecoderLayerPieces

    cfg = transformers.Qwen2Config(hidden_size=64, intermediate_size=96, num_attention_heads=4,
                                   num_key_value_heads=num_key_value_heads, head_dim=16)
    layer = transformers.models.qwen2.modeling_qwen2.Qwen2DecoderLayer(cfg, 0).eval().to(dtype)
    h, attn = torch.randn(1, 3, 64, dtype=dtype), torch.randn(1, 3, 64, dtype=dtype)
    torch.jit.trace_module(DecoderLayerPieces(layer), {"qkv": (h,), "forward": (h, attn)}).save(str(path))


def test_manifest_that_disagrees_with_the_weights_fails_at_load(tiny, svqa_bin, tmp_path):
    """The audit: such exports ran with exit 0. Each fails at load, naming file, tensor, shape and key."""
    arch, export, _, frames_path = tiny
    broken = tmp_path / "broken"
    shutil.copytree(export, broken, ignore=shutil.ignore_patterns("hf"))
    manifest = json.loads((broken / "manifest.json").read_text())

    def fails_with(expected):
        r = subprocess.run([svqa_bin, "probe", "--export", broken, "--frames", frames_path, "--prompt", "q"],
                           capture_output=True, text=True)
        assert (r.returncode, r.stderr) == (1, f"svqa probe: error: {broken}/{expected}\n")

    def edited(section, key, value):
        (broken / "manifest.json").write_text(json.dumps({**manifest, section: {**manifest[section], key: value}}))

    vocab = manifest["text"]["vocab_size"]
    edited("text", "hidden_size", 48)
    fails_with(f"text.pt: embed_tokens.weight has shape [{vocab}, 64], but manifest.json text.hidden_size = 48 "
               f"expects [{vocab}, 48] (a file from another export?)")
    edited("text", "head_dim", 8)
    fails_with("layers/000.pt: q_proj.weight has shape [64, 64], but manifest.json text.num_heads × text.head_dim = 32 "
               "expects [32, 64] (a file from another export?)")
    edited("text", "vocab_size", vocab + 100)
    fails_with(f"text.pt: embed_tokens.weight has shape [{vocab}, 64], but manifest.json text.vocab_size = {vocab + 100} "
               f"expects [{vocab + 100}, 64] (a file from another export?)")
    edited("text", "vocab_size", vocab - 100)
    fails_with(f"tokenizer.json: has ids up to {vocab - 1}, but manifest.json text.vocab_size = {vocab - 100}")
    if arch == "llava_onevision":
        edited("image", "height", 64)
        fails_with("vision.pt: has a 6×6 patch grid (36 patches of 8 px), but manifest.json image.height × "
                   "image.width = 64 × 48 gives 8×6")
        edited("vision", "tokens_per_frame", 16)
        fails_with("vision.pt: makes 9 tokens per frame (6² patches pooled to 3²), but manifest.json "
                   "vision.tokens_per_frame = 16")
    else:
        edited("vision", "patch_size", 16)
        fails_with("vision.pt: patch_embed.proj.weight has shape [32, 3, 2, 14, 14], but manifest.json "
                   "vision.patch_size = 16 expects [*, 3, 2, 16, 16] (a file from another export?)")
    (broken / "manifest.json").write_text(json.dumps(manifest))

    foreign_layer(broken / "layers" / "001.pt", num_key_value_heads=4)
    fails_with("layers/001.pt: k_proj.weight has shape [64, 64], but manifest.json text.num_kv_heads × "
               "text.head_dim = 32 expects [32, 64] (a file from another export?)")
    foreign_layer(broken / "layers" / "001.pt", num_key_value_heads=2, dtype=torch.bfloat16)
    fails_with("layers/001.pt: input_layernorm.weight is BFloat16, but manifest.json dtype = float32 "
               "(a file from another export?)")


def test_libtorch_error_inside_a_module_is_one_line_naming_the_file(tiny, svqa_bin, tmp_path):
    """A trace that does not generalise (a shape frozen at trace time) fails inside TorchScript; the
    user sees one line naming file and method, not c10::Error::what()'s 15–30 line backtrace."""
    arch, export, _, frames_path = tiny
    broken = tmp_path / "broken"
    shutil.copytree(export, broken, ignore=shutil.ignore_patterns("hf"))
    original = torch.jit.load(str(broken / "text.pt"))

    class FrozenShape(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed_tokens = torch.nn.Embedding.from_pretrained(original.embed_tokens.weight.detach().clone())
            self.norm = torch.nn.Module()
            self.norm.weight = torch.nn.Parameter(original.norm.weight.detach().clone())

        def embed(self, ids):
            return self.embed_tokens(ids)

        def forward(self, h):
            return (h.view(1, 3, 64) * self.norm.weight) @ self.embed_tokens.weight.t()

    torch.jit.trace_module(FrozenShape(), {"forward": (torch.randn(1, 3, 64),),
                                           "embed": (torch.tensor([[1, 2, 3]]),)}).save(str(broken / "text.pt"))
    r = subprocess.run([svqa_bin, "probe", "--export", broken, "--frames", frames_path, "--prompt", "q"],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith(f"svqa probe: error: {broken}/text.pt: forward: shape '[1, 3, 64]' is invalid for "
                               "input of size "), r.stderr


def test_llava_onevision_196_preset_gives_196_tokens_per_384px_frame(tiny_export, svqa_bin, tmp_path):
    """The tiny preset MuKV's tests run on: the real model's 27×27 → 14×14 pooling, equal to HF's."""
    export = tiny_export("llava_onevision_196")
    manifest, model, _ = load_hf(export)
    assert manifest["source"].startswith("tiny:llava_onevision_196:")
    assert manifest["vision"]["tokens_per_frame"] == 196
    assert (manifest["image"]["height"], manifest["image"]["width"]) == (384, 384)
    frames = np.random.default_rng(2).integers(0, 256, size=(2, 384, 384, 3), dtype=np.uint8)
    np.save(tmp_path / "frames.npy", frames)
    r = subprocess.run([svqa_bin, "probe", "--export", export, "--frames", tmp_path / "frames.npy", "--prompt", "q",
                        "--visual", tmp_path / "visual.npy", "--generate", "1"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["visual_tokens"] == 2 * 196
    with torch.no_grad():
        hf = model.model.get_video_features(**pixel_values(manifest, frames)).pooler_output[0, :-1]  # newline dropped
    ours = np.load(tmp_path / "visual.npy")
    assert ours.shape == (2 * 196, manifest["text"]["hidden_size"])
    assert np.abs(ours - hf.numpy()).max() <= 1e-4


def test_a_runtime_dtype_other_than_the_exports_is_refused_before_loading(tiny_export, svqa_bin, tmp_path):
    """A trace keeps the casts of the dtype it was traced in (its RMSNorm casts back to float32), so a
    float32 export run in bfloat16 failed inside layer 0 ('mat1 and mat2 must have the same dtype');
    it is one line naming the manifest and the way out."""
    export = tiny_export("llava_onevision")
    annotations = tmp_path / "streams.json"
    annotations.write_text(json.dumps({"streams": [{"id": "s", "video": str(tmp_path / "v.npy"), "questions": [
        {"id": "q", "time": 1.0, "question": "?", "options": ["a", "b"], "answer": "a"}]}]}))
    np.save(tmp_path / "v.npy", np.zeros((4, 48, 48, 3), dtype=np.uint8))
    from experiment_files import write_experiment
    exp = write_experiment(tmp_path / "exp.yaml", "dtype", export, annotations)
    r = subprocess.run([svqa_bin, "run", exp, "--set", "runtime.dtype=bfloat16", "--out", tmp_path / "out"],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert (f"{export}/manifest.json: the export was traced in float32, but runtime.dtype is bfloat16: "
            "export again with --dtype bfloat16") in r.stderr, r.stderr
    assert "mat1 and mat2" not in r.stderr
