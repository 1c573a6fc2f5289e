"""svqa's `rekv` preset (experiments/methods/rekv.yaml) against ReKV's question-answering path
transcribed in Python over the same tiny model's Hugging Face weights (rekv_reference.py): a
synthetic stream whose window fills (the sinks migrate over three frames), multiple-choice questions
at several times, non-integer ones included, and answers whose context outgrows the window (ReKV's
fallback to sinks + sliding window). Per question: the frames encoded, the frames each layer
retrieves, the answer ids and the first answer token's logits.

The tiny export's weights are drawn at std 0.3 (--weight-std): at Hugging Face's 0.02 the model
repeats one token whatever it sees and every retrieval looks alike."""

import json
import subprocess

import numpy as np
import pytest
import torch

from backbone_reference import load_hf, pixel_values, varied_llava_stream
from rekv_reference import ReKV

N_LOCAL, TOPK, FRAMES = 60, 4, 32
CHUNK = 6  # frames per encode chunk: ReKV asserts a chunk fits in n_local (6 · 9 tokens ≤ 60)
QUESTIONS = [  # (question, time, options) in time order, as ReKV's driver asks them
    ("What color is the background?", 7.5, ["red", "green", "blue"]),
    ("Where is the small square?", 12.0, ["left", "right"]),
    ("Which shape moves?", 16.4, ["circle", "square", "none", "both"]),
    ("What color is the background?", 23.0, ["red", "green", "blue"]),
    ("How many objects are there?", 29.7, ["one", "two", "three"]),
]


@pytest.fixture(scope="module")
def stream(tmp_path_factory, root, svqa_bin):
    tmp = tmp_path_factory.mktemp("rekv_parity")
    export, manifest, frames, _ = varied_llava_stream(root, tmp, FRAMES, QUESTIONS)
    (tmp / "exp.yaml").write_text(f"""
_base_: {root / 'experiments/methods/rekv.yaml'}
name: parity
runtime: {{device: cpu, dtype: float32, threads: 2}}
backbone: {{options: {{export: {export}}}}}
encoding: {{options: {{n_local: {N_LOCAL}}}}}
retrieval: {{options: {{retrieve_size: {TOPK}}}}}
benchmark: {{type: stream_list, options: {{annotations: {tmp / 'streams.json'}}}}}
stream: {{fps: 1, chunk_frames: {CHUNK}, record_logits: true}}
output: {{dir: {tmp / 'results'}}}
""")
    r = subprocess.run([svqa_bin, "run", tmp / "exp.yaml"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = (tmp / "results" / "parity" / "predictions.jsonl").read_text().splitlines()
    records = {rec["question_id"]: rec for rec in map(json.loads, lines)}
    svqa = [records[f"q{i}"] for i in range(len(QUESTIONS))]

    manifest, model, tok = load_hf(export)
    rekv = ReKV(model, tok, manifest, N_LOCAL, TOPK, sample_fps=1.0, encode_chunk_size=CHUNK)
    with torch.no_grad():
        reference = rekv.stream(pixel_values(manifest, frames)["pixel_values_videos"],
                                [(q, t, o) for q, t, o in QUESTIONS])
    return {"svqa": svqa, "reference": reference, "rekv": rekv}


def test_the_stream_exercises_every_rule(stream):
    rekv = stream["rekv"]
    tokens_per_frame = rekv.n_frame_tokens
    # The sinks outnumber a frame's tokens: they migrate over several frames.
    assert rekv.n_init > tokens_per_frame
    assert all(kv.init_exc for kv in rekv.kv)
    # Every answer's context outgrows the window: the fallback to sinks + sliding window runs.
    for question, _, _ in QUESTIONS:
        assert rekv.n_init + TOPK * tokens_per_frame + len(rekv.ids(question)) > N_LOCAL
    # Answers and retrievals vary: the comparison below can tell runs apart.
    ref = stream["reference"]
    assert len({tuple(r["ids"]) for r in ref}) > 1
    assert len({tuple(layer) for r in ref for layer in r["retrieved"]}) > 2


@pytest.mark.parametrize("i", range(len(QUESTIONS)))
def test_rekv_preset_equals_the_reference_path(stream, i):
    ours, ref = stream["svqa"][i], stream["reference"][i]
    assert ours["frames_encoded"] == ref["frames"] == int(QUESTIONS[i][1])  # frames [0, int(t·fps))
    assert ours["retrieved"] == ref["retrieved"]
    assert ours["prediction_ids"] == ref["ids"]
    logits = np.array(ours["extra"]["first_token_logits"])
    np.testing.assert_allclose(logits, ref["logits"].numpy(), atol=1e-4, rtol=1e-4)
