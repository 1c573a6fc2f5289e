"""svqa's `stc` preset (experiments/methods/stc.yaml: STC-Cacher and STC-Pruner in front of ReKV)
against STC's released code transcribed in Python over the same tiny model's Hugging Face weights
(stc_reference.py, on rekv_reference.py). Planted frames: each frame is the previous one with 9 of its
36 patches redrawn, so on a frame the cacher updates (refresh interval 2: the previous frame is its
reference) the first layer recomputes exactly the redrawn patches (update ratio 0.25 of 36 = 9).
Questions at 6.5, 9, 12.2 and 16 s restart the refresh count (frame 9 refreshes where a count from
the stream's start would update it); by the first one the sinks have joined the window (ReKV's
retrieval from the offloaded blocks), and every answer outgrows the window (ReKV's fallback). Per question: for every frame encoded since the previous one, whether it
refreshed, the tokens each vision layer recomputed and the tokens the pruner kept (4 of 9); the
frames each layer retrieves, the answer ids and the first answer token's logits."""

import json
import subprocess

import numpy as np
import pytest
import torch

from backbone_reference import load_hf, pixel_values, varied_llava_stream
from stc_reference import StcReKV

N_LOCAL, TOPK, FRAMES, KEEP, RATIO, INTERVAL, PATCH = 24, 3, 16, 4, 0.25, 2, 8
QUESTIONS = [  # (question, time, options) in time order
    ("What color is the background?", 6.5, ["red", "green", "blue"]),
    ("Where is the small square?", 9.0, ["left", "right"]),
    ("Which shape moves?", 12.2, ["circle", "square", "none", "both"]),
    ("How many objects are there?", 16.0, ["one", "two", "three"]),
]


def planted_frames(n, size, changed):
    """Frame 0 random; frame f the previous one with `changed` patches redrawn. Returns (frames, the
    redrawn patches of each frame)."""
    rng = np.random.default_rng(11)
    side = size // PATCH
    frames, redrawn = [rng.integers(0, 256, (size, size, 3), dtype=np.uint8)], [[]]
    for _ in range(1, n):
        frame = frames[-1].copy()
        patches = sorted(int(p) for p in rng.choice(side * side, changed, replace=False))
        for p in patches:
            r, c = divmod(p, side)
            frame[r * PATCH:(r + 1) * PATCH, c * PATCH:(c + 1) * PATCH] = rng.integers(0, 256, (PATCH, PATCH, 3))
        frames.append(frame)
        redrawn.append(patches)
    return np.stack(frames), redrawn


@pytest.fixture(scope="module")
def stream(tmp_path_factory, root, svqa_bin):
    tmp = tmp_path_factory.mktemp("stc")
    export, manifest, _, _ = varied_llava_stream(root, tmp, FRAMES, QUESTIONS)
    side = manifest["image"]["height"] // PATCH
    frames, redrawn = planted_frames(FRAMES, manifest["image"]["height"], int(side * side * RATIO))
    np.save(tmp / "video.npy", frames)
    (tmp / "exp.yaml").write_text(f"""
_base_: {root / 'experiments/methods/stc.yaml'}
name: stc
runtime: {{device: cpu, dtype: float32, threads: 2}}
backbone: {{options: {{export: {export}}}}}
encoding: {{options: {{n_local: {N_LOCAL}, tokens_per_frame: {KEEP}, update_ratio: {RATIO},
                       refresh_interval: {INTERVAL}, record_tokens: true}}}}
retrieval: {{options: {{retrieve_size: {TOPK}}}}}
benchmark: {{type: stream_list, options: {{annotations: {tmp / 'streams.json'}}}}}
stream: {{fps: 1, record_logits: true}}
output: {{dir: {tmp / 'results'}}}
""")
    r = subprocess.run([svqa_bin, "run", tmp / "exp.yaml"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = (tmp / "results" / "stc" / "predictions.jsonl").read_text().splitlines()
    records = {rec["question_id"]: rec for rec in map(json.loads, lines)}
    manifest, model, tok = load_hf(export)
    stc = StcReKV(model, tok, manifest, N_LOCAL, TOPK, RATIO, INTERVAL, KEEP)
    with torch.no_grad():
        reference = stc.stream(pixel_values(manifest, frames)["pixel_values_videos"], QUESTIONS)
    return {"svqa": [records[f"q{i}"] for i in range(len(QUESTIONS))], "reference": reference,
            "records": stc.records, "redrawn": redrawn}


def test_the_planted_patches_are_what_the_first_layer_recomputes(stream):
    updated = 0
    for record in stream["records"]:
        for frame, steps in record.items():
            if not steps["refresh"]:
                assert steps["recomputed"][0] == stream["redrawn"][int(frame)]
                updated += 1
    assert updated == 7  # frames 1, 3, 5, 7, 10, 13, 15
    refreshed = sorted(int(f) for r in stream["records"] for f, s in r.items() if s["refresh"])
    assert refreshed == [0, 2, 4, 6, 8, 9, 11, 12, 14]  # the count restarts at 6, 9 and 12


@pytest.mark.parametrize("i", range(len(QUESTIONS)))
def test_stc_preset_equals_the_reference_path(stream, i):
    ours, ref = stream["svqa"][i], stream["reference"][i]
    assert ours["frames_encoded"] == ref["frames"] == int(QUESTIONS[i][1])
    assert ours["extra"]["stc"]["frames"] == stream["records"][i]  # refresh, recomputed per layer, kept
    assert ours["retrieved"] == ref["retrieved"]
    assert ours["prediction_ids"] == ref["ids"]
    logits = np.array(ours["extra"]["first_token_logits"])
    np.testing.assert_allclose(logits, ref["logits"].numpy(), atol=1e-4, rtol=1e-4)
