"""Hugging Face side of the backbone parity tests: tiny exports, inputs built as HF's processors
build them, and greedy decoding with the HF model's own forward."""

import json
import pathlib
import subprocess
import sys

import numpy as np
import torch

ROOT = pathlib.Path(__file__).resolve().parents[2]


def export_tiny(architecture, out, seed=0, weight_std=None):
    """A tiny random export; `weight_std` (e.g. 0.3) draws weights where answers depend on the input."""
    scale = [] if weight_std is None else ["--weight-std", str(weight_std)]
    subprocess.run([sys.executable, "-m", "models.export", "--tiny", architecture, "--seed", str(seed), *scale,
                    "--out", str(out)], cwd=ROOT, check=True, capture_output=True)
    return out


def varied_llava_stream(root, tmp, n_frames, questions):
    """The parity tests' stream: the tiny LLaVA-OneVision export at weight std 0.3 (seed 3) in tmp/export,
    n_frames random frames (seed 5) in tmp/video.npy and a stream_list file tmp/streams.json of
    `questions` [(question, time, options)], ids q0, q1, … Returns (export, manifest, frames, the file's questions)."""
    export = tmp / "export"
    r = subprocess.run([sys.executable, "-m", "models.export", "--tiny", "llava_onevision", "--seed", "3",
                        "--weight-std", "0.3", "--out", export], cwd=root, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    manifest = json.loads((export / "manifest.json").read_text())
    height, width = manifest["image"]["height"], manifest["image"]["width"]
    frames = np.random.default_rng(5).integers(0, 256, (n_frames, height, width, 3), dtype=np.uint8)
    np.save(tmp / "video.npy", frames)
    listed = [{"id": f"q{i}", "time": t, "question": q, "options": o, "answer": o[0]}
              for i, (q, t, o) in enumerate(questions)]
    (tmp / "streams.json").write_text(json.dumps({"streams": [{"id": "s", "video": "video.npy", "questions": listed}]}))
    return export, manifest, frames, listed


def load_hf(export_dir):
    import transformers
    from tokenizers import Tokenizer

    manifest = json.loads((export_dir / "manifest.json").read_text())
    cls = (transformers.LlavaOnevisionForConditionalGeneration if manifest["architecture"] == "llava_onevision"
           else transformers.Qwen2_5_VLForConditionalGeneration)
    model = cls.from_pretrained(export_dir / "hf", dtype=torch.float32).eval()
    return manifest, model, Tokenizer.from_file(str(export_dir / "hf" / "tokenizer.json"))


def pixel_values(manifest, frames):
    """What the HF video processor produces for frames already at the export's size (no resize):
    rescale, normalise and, for Qwen2.5-VL, its patch flattening (video_processing_qwen2_vl.py)."""
    spec = manifest["image"]
    x = torch.from_numpy(frames).permute(0, 3, 1, 2).float() * spec["rescale_factor"]
    x = (x - torch.tensor(spec["mean"]).view(1, 3, 1, 1)) / torch.tensor(spec["std"]).view(1, 3, 1, 1)
    if spec["resize"] == "fixed":
        return {"pixel_values_videos": x[None]}
    tp, p, m = spec["temporal_patch_size"], spec["patch_size"], spec["merge_size"]
    if x.shape[0] % tp:
        x = torch.cat([x, x[-1:].repeat(tp - x.shape[0] % tp, 1, 1, 1)])
    t, c, h, w = x.shape
    gt, gh, gw = t // tp, h // p, w // p
    patches = x.view(1, gt, tp, c, gh // m, m, p, gw // m, m, p).permute(0, 1, 4, 7, 5, 8, 3, 2, 6, 9)
    return {"pixel_values_videos": patches.reshape(gt * gh * gw, c * tp * p * p),
            "video_grid_thw": torch.tensor([[gt, gh, gw]])}


def prompt_ids(manifest, tok, question, n_video_tokens):
    """The chat template with the video as HF's processor expands it: placeholder tokens."""
    template = manifest["chat"]["video_prompt"]
    before, after = template.split("{video}")
    video_token = "<video>" if manifest["architecture"] == "llava_onevision" else "<|video_pad|>"
    ids = tok.encode(before, add_special_tokens=False).ids + [tok.token_to_id(video_token)] * n_video_tokens
    return ids + tok.encode(after.replace("{question}", question), add_special_tokens=False).ids


def video_token_count(manifest, inputs, n_frames):
    if manifest["architecture"] == "llava_onevision":
        return n_frames * manifest["vision"]["tokens_per_frame"] + 1  # + the one image_newline
    return int(inputs["video_grid_thw"].prod()) // manifest["image"]["merge_size"] ** 2


def hf_greedy(model, manifest, ids, inputs, steps, extra=None):
    """Last-position logits of the prompt and `steps` greedy ids (stopping after EOS), each step a
    full forward of the HF model (no cache, so nothing but the model's own forward is trusted)."""
    ids = list(ids)
    first, generated = None, []
    with torch.no_grad():
        for _ in range(steps):
            step = torch.tensor([ids])
            if manifest["architecture"] == "qwen2_5_vl":  # the processor's modality map, which mRoPE needs
                extra = {**(extra or {}), "mm_token_type_ids": (step == model.config.video_token_id).int() * 2}
            logits = model(input_ids=step, **inputs, **(extra or {}), use_cache=False).logits[0, -1]
            if first is None:
                first = logits.clone()
            nxt = int(logits.argmax())
            generated.append(nxt)
            ids.append(nxt)
            if nxt in manifest["tokens"]["eos"]:
                break
    return first.numpy(), generated


def original_qwen_rope_index(n_before, grid_llm, interval, n_after):
    """Qwen2.5-VL's get_rope_index as released with the model (transformers ≤ 5.2): text after the
    video starts one past the largest position used so far."""
    t, h, w = grid_llm
    text = np.arange(n_before)
    ti = (np.arange(t, dtype=np.float32) * np.float32(interval)).astype(np.int64)
    grid = np.stack(np.meshgrid(ti, np.arange(h), np.arange(w), indexing="ij")).reshape(3, -1) + n_before
    start = grid.max() + 1
    after = np.arange(start, start + n_after)
    return np.concatenate([np.stack([text] * 3), grid, np.stack([after] * 3)], axis=1)
