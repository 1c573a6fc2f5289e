"""svqa's `fluxmem` encoder against FluxMem's reference path on the tiny Qwen2.5-VL export (weights at
std 0.3): per question the clip's frames through Hugging Face's vision tower, laid out as the model's
prompt (mRoPE positions as released), FluxMem's memory transcribed from its code (fluxmem_reference.py)
over the whole sequence, then the HF language model on the tokens it keeps at their own positions,
greedy. Per question: which temporal patches are short-, mid- or long-term, the tokens each keeps and
merges away, the answer ids and the first answer token's logits.

The planted video: temporal patches of a random background where a square comes and goes, some patches
repeated, so a mid- or long-term patch whose next patch is its repeat keeps nothing (every token seen
again, similarity 1 > 0.8). 2 patches short-term, 2 mid-term; the clip holds at most 12 frames."""

import json
import subprocess

import numpy as np
import pytest
import torch

from backbone_reference import export_tiny, load_hf, original_qwen_rope_index, pixel_values, prompt_ids
from fluxmem_reference import Memory

SHORT, MID, MAX_FRAMES, STEPS = 4, 4, 12, 5
H, W = 140, 168  # 28-aligned, within the tiny export's pixel limits: the processor keeps the frames as they are
QUESTIONS = [("What moves?", 10.5), ("Where is the square?", 16.5)]  # 10 and 16 frames at 1 fps
# Patch k's content: 0 the background; 1, 2, 3 the background with squares; equal numbers repeat.
PATCHES = [0, 0, 1, 1, 2, 3, 3, 0, 2]  # 18 frames: the stream goes on past the last question
REPEATED = {0: [0, 2], 1: [0, 3]}  # per question, the clip's patches followed by their repeat (mid/long)


def planted_video():
    rng = np.random.default_rng(8)
    base = rng.integers(0, 256, (H, W, 3), dtype=np.uint8)
    looks = [base]
    for top, left in ((0, 0), (84, 112), (56, 56)):
        img = base.copy()
        img[top:top + 56, left:left + 56] = rng.integers(0, 256, 3, dtype=np.uint8)
        looks.append(img)
    return np.stack([looks[p] for p in PATCHES for _ in range(2)])


@pytest.fixture(scope="module")
def stream(tmp_path_factory, root, svqa_bin):
    tmp = tmp_path_factory.mktemp("fluxmem")
    export = export_tiny("qwen2_5_vl", tmp / "export", seed=2, weight_std=0.3)
    frames = planted_video()
    np.save(tmp / "video.npy", frames)
    listed = [{"id": f"q{i}", "time": t, "question": q} for i, (q, t) in enumerate(QUESTIONS)]
    (tmp / "streams.json").write_text(json.dumps({"streams": [{"id": "s", "video": "video.npy", "questions": listed}]}))
    (tmp / "exp.yaml").write_text(f"""
_base_: {root / 'experiments/methods/fluxmem.yaml'}
name: fluxmem
runtime: {{device: cpu, dtype: float32, threads: 2}}
backbone: {{options: {{export: {export}}}}}
encoding: {{options: {{short_term_frames: {SHORT}, mid_term_frames: {MID}, max_frames: {MAX_FRAMES}}}}}
benchmark: {{type: stream_list, options: {{annotations: {tmp / 'streams.json'}}}}}
stream: {{fps: 1, frame_times: stride, chunk_frames: 4, max_new_tokens: {STEPS}, record_logits: true,
          context_window_s: 0}}
output: {{dir: {tmp / 'results'}}}
""")
    r = subprocess.run([svqa_bin, "run", tmp / "exp.yaml"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    records = {rec["question_id"]: rec for rec in map(json.loads, (tmp / "results/fluxmem/predictions.jsonl").open())}
    return export, frames, [records[f"q{i}"] for i in range(len(QUESTIONS))]


def reference(export, frames, question):
    """FluxMem's path on the HF model: the prompt with the clip's features, the memory over the whole
    sequence, then greedy decoding over the kept tokens (a full forward per step, no cache)."""
    manifest, model, tok = load_hf(export)
    inputs = pixel_values(manifest, frames)
    grid = inputs["video_grid_thw"]
    n_video = int(grid.prod()) // 4
    ids = torch.tensor(prompt_ids(manifest, tok, question, n_video))
    video = ids == tok.token_to_id("<|video_pad|>")
    n_before = int(video.nonzero()[0])
    llm_grid = (int(grid[0, 0]), int(grid[0, 1]) // 2, int(grid[0, 2]) // 2)
    interval = manifest["vision"]["tokens_per_second"] * 2 / 1.0  # 2 frames a patch at 1 fps
    positions = torch.from_numpy(original_qwen_rope_index(n_before, llm_grid, interval, len(ids) - n_before - n_video))
    with torch.no_grad():
        embeds = model.get_input_embeddings()(ids)
        embeds[video] = model.model.get_video_features(**inputs).pooler_output[0]
        memory = Memory(embeds.clone(), positions, ids, SHORT, MID, 0.8,
                        (tok.token_to_id("<|vision_start|>"), tok.token_to_id("<|vision_end|>")))
        kept = memory.run()
        x, pos = memory.hidden[kept], positions[:, kept]
        per_patch = [int(((kept > n_before + k * 30 - 1) & (kept < n_before + (k + 1) * 30)).sum())
                     for k in range(llm_grid[0])]
        out, first = [], None
        for _ in range(STEPS):
            h = model.model.language_model(inputs_embeds=x[None], position_ids=pos[:, None]).last_hidden_state
            logits = model.lm_head(h[0, -1])
            first = logits.clone() if first is None else first
            nxt = int(logits.argmax())
            out.append(nxt)
            if nxt in manifest["tokens"]["eos"]:
                break
            x = torch.cat([x, model.get_input_embeddings()(torch.tensor([nxt]))])
            pos = torch.cat([pos, pos[:, -1:] + 1], dim=1)
    return {"ids": out, "logits": first.numpy(), "kept": per_patch}


@pytest.mark.parametrize("i", range(len(QUESTIONS)))
def test_fluxmem_equals_the_reference_path(stream, i):
    export, frames, records = stream
    rec = records[i]
    assert "error" not in rec, rec.get("error")
    extra = rec["extra"]["fluxmem"]
    n = int(QUESTIONS[i][1])
    fed = list(range(max(0, n - MAX_FRAMES), n))
    assert extra["frames_fed"] == fed  # the clip: the last MAX_FRAMES frames before the question
    patches = len(fed) // 2
    assert extra["stages"] == ["long"] * (patches - 4) + ["mid"] * 2 + ["short"] * 2
    ref = reference(export, frames[fed], QUESTIONS[i][0])
    assert extra["kept_tokens"] == ref["kept"]
    for k in REPEATED[i]:  # the planted answer: a patch seen again next keeps nothing
        assert extra["kept_tokens"][k] == 0
    assert extra["kept_tokens"][-2:] == [30, 30]  # short-term patches whole (5 x 6 tokens)
    assert rec["prediction_ids"] == ref["ids"]
    np.testing.assert_allclose(np.array(rec["extra"]["first_token_logits"]), ref["logits"], atol=1e-4, rtol=1e-4)


def test_the_stream_exercises_pruning_and_merging(stream):
    _, _, records = stream
    extras = [r["extra"]["fluxmem"] for r in records]
    assert any(0 < k < 30 for e in extras for k, s in zip(e["kept_tokens"], e["stages"]) if s == "mid")
    assert any(m > 0 for e in extras for m in e["merged_away"])
    assert len({tuple(r["prediction_ids"]) for r in records}) > 1
