"""The papers' no-memory baselines (encoding fresh_frames + retrieval full_context): at every question
the frames chosen (uniform over the stream so far, or the last N) are the ones the rule gives, and the
answer ids equal the Hugging Face model generating greedily on exactly those frames between the same
sink and answer prompts (the streaming layout: no image_newline), on the tiny LLaVA-OneVision export.
The records account the N frames' K/V as memory and put their vision and prefill in the TTFT."""

import json
import subprocess
import sys

import numpy as np
import pytest
import torch
import yaml

from backbone_reference import load_hf, pixel_values

SINK = "<|im_start|>system \nYou are a helpful assistant.<|im_end|><|im_start|>user "
ANSWER = "\n{question}<|im_end|><|im_start|>assistant\n"
TIMES = [2.0, 6.5, 11.0, 13.25]  # non-integer times included; frames at 1 fps
N = 4
STEPS = 6


@pytest.fixture(scope="module")
def stream(tmp_path_factory, root):
    work = tmp_path_factory.mktemp("fresh")
    export = work / "export"  # weights at std 0.3 (--weight-std): at HF's 0.02 every answer is one token
    r = subprocess.run([sys.executable, "-m", "models.export", "--tiny", "llava_onevision", "--seed", "4",
                        "--weight-std", "0.3", "--out", export], cwd=root, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    root = work
    frames = np.random.default_rng(3).integers(0, 256, size=(15, 48, 48, 3), dtype=np.uint8)  # the export's size
    np.save(root / "video.npy", frames)
    questions = [{"id": f"q{i}", "time": t, "question": f"What happens at step {i}?"} for i, t in enumerate(TIMES)]
    (root / "streams.json").write_text(json.dumps({"streams": [{"id": "s", "video": "video.npy", "questions": questions}]}))
    return root, export, frames


def run(svqa_bin, root, export, sampling):
    config = {
        "name": f"fresh_{sampling}",
        "runtime": {"device": "cpu", "dtype": "float32", "threads": 2, "seed": 0},
        "backbone": {"type": "torchscript", "options": {"export": str(export)}},
        "encoding": {"type": "fresh_frames", "options": {"sampling": sampling, "frames": N}},
        "retrieval": {"type": "full_context"},
        "benchmark": {"type": "stream_list", "options": {"annotations": str(root / "streams.json")}},
        "stream": {"frame_times": "stride", "fps": 1.0, "chunk_frames": 3, "sink_prompt": SINK, "answer_prompt": ANSWER, "max_new_tokens": STEPS},
        "output": {"dir": str(root / "results")},
    }
    (root / f"{sampling}.yaml").write_text(yaml.safe_dump(config))
    r = subprocess.run([svqa_bin, "run", root / f"{sampling}.yaml"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = (root / "results" / f"fresh_{sampling}" / "predictions.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def hf_answer(model, manifest, tok, frames, question):
    """Greedy ids of the HF model on [sink prompt | frames' visual tokens | answer prompt], each step a full
    forward without cache."""
    embed = model.get_input_embeddings()
    ids = lambda text: torch.tensor(tok.encode(text, add_special_tokens=False).ids)  # noqa: E731
    with torch.no_grad():
        visual = model.model.get_video_features(**pixel_values(manifest, frames)).pooler_output[0, :-1]
        x = torch.cat([embed(ids(SINK)), visual, embed(ids(ANSWER.replace("{question}", question)))])
        out = []
        for _ in range(STEPS):
            nxt = int(model(inputs_embeds=x[None], use_cache=False).logits[0, -1].argmax())
            out.append(nxt)
            if nxt in manifest["tokens"]["eos"]:
                break
            x = torch.cat([x, embed(torch.tensor([nxt]))])
    return out


@pytest.mark.parametrize("sampling", ["uniform", "recent"])
def test_fresh_frames_answers_equal_hf_on_the_same_frames(stream, svqa_bin, sampling):
    root, export, frames = stream
    records = run(svqa_bin, root, export, sampling)
    manifest, model, tok = load_hf(export)
    fed_sets = set()
    for rec in records:
        assert "error" not in rec, rec["error"]
        n = rec["frames_encoded"]  # the frames before the question, by the runner's frame rule
        assert n == int(rec["time"])  # [0, int(t·fps)) at 1 fps, the references' rule
        k = min(N, n)
        expected = (np.linspace(0, n - 1, k).astype(int).tolist() if sampling == "uniform" else list(range(n - k, n)))
        fed = rec["extra"]["fresh_frames"]["frames_fed"]
        assert fed == expected, rec["question_id"]
        fed_sets.add(tuple(fed))
        assert rec["prediction_ids"] == hf_answer(model, manifest, tok, frames[fed], rec["question"]), rec["question_id"]
        # Memory: the N frames' K/V at every layer; TTFT holds their vision and prefill.
        tokens = k * manifest["vision"]["tokens_per_frame"]
        assert rec["memory"]["tokens"] == tokens and rec["memory"]["blocks"] == k
        assert all(c == len(tok.encode(SINK, add_special_tokens=False).ids) + tokens for c in rec["context_tokens"])
        extra = rec["extra"]["fresh_frames"]
        assert rec["timing"]["ttft_s"] >= extra["vision_s"] + extra["prefill_s"] > 0
        held = extra["frames_held"]
        assert held == (n if sampling == "uniform" else k)  # recent holds its last N frames only
        assert extra["held_bytes"] == held * 48 * 48 * 3
    assert len(fed_sets) == len(TIMES)  # every question saw other frames
    assert len({tuple(rec["prediction_ids"]) for rec in records}) > 1  # and the answers differ: equality means something


def test_old_baseline_names_are_refused_with_the_new_one(svqa_bin, root, tmp_path):
    for old, new in (("uniform", "bank_uniform"), ("recent", "bank_recent")):
        r = subprocess.run([svqa_bin, "validate", root / "experiments/demo.yaml", "--set", f"retrieval.type={old}"],
                           capture_output=True, text=True)
        assert r.returncode == 2
        assert f"retrieval strategy '{old}' was renamed '{new}'" in r.stderr and "fresh_frames" in r.stderr, r.stderr
