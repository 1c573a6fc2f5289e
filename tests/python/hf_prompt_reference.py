"""Hugging Face logits of [text, one video, text] given as token ids and raw frames, for C++ tests
of memory strategies that bring back a single block (tests/test_mukv.cpp).

    python hf_prompt_reference.py CASES.json

CASES.json is a list of {"export", "frames": FRAMES.npy (uint8 [F, H, W, 3] at the export's size),
"before": [ids], "after": [ids], "out": OUT.npy}; each case's last-position logits go to OUT.npy.
LLaVA-OneVision runs on embeddings with the video's tokens and no image_newline (the streaming
layout); Qwen2.5-VL on ids with video placeholders, its own vision tower and get_rope_index.
"""

import json
import pathlib
import sys

import numpy as np
import torch

from backbone_reference import hf_greedy, load_hf, pixel_values, video_token_count


def logits(case):
    manifest, model, _ = load_hf(pathlib.Path(case["export"]))
    frames = np.load(case["frames"])
    inputs = pixel_values(manifest, frames)
    before, after = case["before"], case["after"]
    if manifest["architecture"] == "llava_onevision":
        with torch.no_grad():
            visual = model.model.get_video_features(**inputs).pooler_output[0, :-1]  # image_newline dropped
            embed = model.get_input_embeddings()
            x = torch.cat([embed(torch.tensor(before)), visual, embed(torch.tensor(after))])[None]
            return model(inputs_embeds=x, use_cache=False).logits[0, -1].numpy()
    ids = before + [model.config.video_token_id] * video_token_count(manifest, inputs, len(frames)) + after
    first, _ = hf_greedy(model, manifest, ids, inputs, 1)
    return first


def main(cases_file):
    for case in json.loads(pathlib.Path(cases_file).read_text()):
        np.save(case["out"], logits(case).astype(np.float32))


if __name__ == "__main__":
    main(sys.argv[1])
