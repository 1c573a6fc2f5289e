"""svqa's `hermes` preset (experiments/methods/hermes.yaml) against HERMES's streaming path transcribed
in Python over the same tiny model's Hugging Face weights (hermes_reference.py): a synthetic stream
whose cache passes its budget after a few frames, multiple-choice questions at several times. Per
question: the frames encoded, the compactions, the tokens and exact positions every layer holds (which
frames' tokens, which anchors, the summary token), the answer ids and the first answer token's logits.

The tiny LLaVA-OneVision has 3 layers: tier ratios 0.34 / 0.33 give one short-term, one mid and one
long-term layer (the preset's 0.1 / 0.3 give 28-layer LLaVA-OV-7B 2 / 18 / 8). A second run puts the
position limit low enough that compactions re-index positions (the reference's shift left). Weights
drawn at std 0.3: at 0.02 every attention looks alike."""

import json
import subprocess

import numpy as np
import pytest
import torch

from backbone_reference import load_hf, pixel_values, varied_llava_stream
from hermes_reference import Hermes
from rekv_reference import format_mcqa_prompt

BUDGET, FRAMES, RATIOS = 40, 24, (0.34, 0.33)
QUESTIONS = [  # (question, time, options) in time order
    ("What color is the background?", 2.5, ["red", "green", "blue"]),
    ("Where is the small square?", 9.0, ["left", "right"]),
    ("Which shape moves?", 15.4, ["circle", "square", "none", "both"]),
    ("How many objects are there?", 23.7, ["one", "two", "three"]),
]
LIMITS = {"plain": 32768, "reindexed": 1100}  # 1100: positions past 76 are re-indexed


def run_svqa(root, svqa_bin, tmp, export, limit, extra=""):
    (tmp / "exp.yaml").write_text(f"""{extra}
_base_: {root / 'experiments/methods/hermes.yaml'}
name: hermes
runtime: {{device: cpu, dtype: float32, threads: 2}}
backbone: {{options: {{export: {export}}}}}
encoding: {{options: {{budget: {BUDGET}, short_term_ratio: {RATIOS[0]}, long_term_ratio: {RATIOS[1]},
                       max_position_embeddings: {limit}, record_positions: true}}}}
benchmark: {{type: stream_list, options: {{annotations: {tmp.parent / 'streams.json'}}}}}
stream: {{fps: 1, chunk_frames: 5, record_logits: true}}
output: {{dir: {tmp / 'results'}}}
""")
    r = subprocess.run([svqa_bin, "run", tmp / "exp.yaml"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = (tmp / "results" / "hermes" / "predictions.jsonl").read_text().splitlines()
    records = {rec["question_id"]: rec for rec in map(json.loads, lines)}
    return [records[f"q{i}"] for i in range(len(QUESTIONS))]


@pytest.fixture(scope="module")
def runs(tmp_path_factory, root, svqa_bin):
    tmp = tmp_path_factory.mktemp("hermes")
    export, manifest, frames, questions = varied_llava_stream(root, tmp, FRAMES, QUESTIONS)
    _, model, tok = load_hf(export)
    pixels = pixel_values(manifest, frames)["pixel_values_videos"]
    out = {}
    for name, limit in LIMITS.items():
        (tmp / name).mkdir()
        svqa = run_svqa(root, svqa_bin, tmp / name, export, limit)
        hermes = Hermes(model, tok, manifest, BUDGET, *RATIOS, max_position_embeddings=limit)
        with torch.no_grad():
            reference = hermes.stream(pixels, questions,
                                      lambda q: format_mcqa_prompt(q["question"], q["options"])["prompt"], 16)
        out[name] = {"svqa": svqa, "reference": reference, "hermes": hermes}
    out["experiment"] = tmp / "plain" / "exp.yaml"
    return out


def test_the_stream_exercises_every_rule(runs):
    hermes = runs["plain"]["hermes"]
    assert [hermes.layer_rule(i)[0] for i in range(3)] == ["short-term", "mid-term", "long-term"]
    ref = runs["plain"]["reference"]
    assert ref[0]["compactions"] == 0 < ref[1]["compactions"]  # the first question comes before the budget fills
    assert runs["plain"]["reference"][-1]["reindexings"] == 0 < runs["reindexed"]["reference"][-1]["reindexings"]
    # The layers keep different tokens, and the answers differ between questions.
    last = ref[-1]["positions"]
    assert last[0] != last[2]
    assert len({tuple(r["ids"]) for r in ref}) > 1


@pytest.mark.parametrize("run", list(LIMITS))
@pytest.mark.parametrize("i", range(len(QUESTIONS)))
def test_hermes_preset_equals_the_reference_path(runs, run, i):
    ours, ref = runs[run]["svqa"][i], runs[run]["reference"][i]
    assert ours["frames_encoded"] == ref["frames"] == int(QUESTIONS[i][1])  # frames [0, int(t·fps))
    extra = ours["extra"]["hermes"]
    assert extra["compactions"] == ref["compactions"]
    assert extra["reindexings"] == ref["reindexings"]
    assert extra["layer_tokens"] == ref["layer_tokens"]
    assert extra["positions"] == ref["positions"]  # every layer holds exactly the tokens the rule keeps
    assert ours["prediction_ids"] == ref["ids"]
    logits = np.array(ours["extra"]["first_token_logits"])
    np.testing.assert_allclose(logits, ref["logits"].numpy(), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("run", list(LIMITS))
def test_every_layer_stays_within_its_budget_and_answers_causally(runs, run):
    n_frame = 9  # the tiny LLaVA-OV's tokens per frame
    for rec in runs[run]["svqa"]:
        assert all(n <= BUDGET for n in rec["extra"]["hermes"]["layer_tokens"])
        for layer in rec["retrieved"]:
            for block in layer:
                assert rec["block_spans"][str(block)][1] <= rec["time"], "memory from after the question"
    # Between questions, the transcription checks the budget after every frame.
    hermes = runs[run]["hermes"]
    assert all(k.shape[1] - hermes.visual_start_idx <= BUDGET for k in hermes.k)
    assert n_frame < BUDGET


def test_deep_layers_hold_anchors_and_a_summary(runs):
    """Once compacted, the long-term layer holds BUDGET − 1 kept tokens and the summary token right
    after the last of them, and keeps other tokens than the short-term layer; each layer numbers its
    own positions (no gap at its end), so a layer's next token follows its own last one."""
    for rec in runs["plain"]["svqa"][1:]:
        short, _, long_ = rec["extra"]["hermes"]["positions"]
        assert len(long_) == len(short) == BUDGET and long_[-1] == long_[-2] + 1
        assert long_ != short
        assert rec["context_tokens"][2] == rec["context_tokens"][0]  # sinks + BUDGET in every layer


def test_a_memory_cache_is_refused_naming_both_keys(runs, svqa_bin, tmp_path):
    # HERMES's evictions cannot be replayed from a snapshot (a log of the blocks each call adds): its
    # registration declares it rewrites its memory, and validation refuses the cache before any model loads.
    exp = tmp_path / "cached.yaml"
    exp.write_text(runs["experiment"].read_text() + f"memory: {{cache: {tmp_path / 'memory_cache'}}}\n")
    r = subprocess.run([svqa_bin, "validate", exp], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "memory.cache: encoding.type hermes evicts and rewrites the blocks it added" in r.stderr, r.stderr
    assert not (tmp_path / "memory_cache").exists()
