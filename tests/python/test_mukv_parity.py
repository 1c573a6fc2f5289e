"""svqa's `mukv` preset (experiments/methods/mukv.yaml, budgets scaled) against MuKV's reference code's
order of steps (mukv_reference.py) over the tiny LLaVA-OneVision export with 196 tokens per frame, its
weights drawn at a scale where retrievals and answers vary: at every question (several times, non-integer
ones included) the frames encoded are [0, int(t·fps)), the blocks brought back are the same blocks in the
same order, and the answer ids are the same."""

import json
import subprocess
import sys

import pytest
import torch
import transformers
import yaml

from mukv_reference import MukvReference, frames_npy, svqa_block_ids

TIMES = [5.0, 9.5, 14.25, 21.75]
CHUNK = 6  # frames per encode chunk (the reference's 64, scaled): segments restart at each
BLOCKS = {"patch": 4, "frame": 3, "segment": 1}
STEPS = 6


@pytest.fixture(scope="module")
def setup(tmp_path_factory, svqa_bin, root):
    work = tmp_path_factory.mktemp("mukv_parity")
    export = work / "export"  # weights at std 0.3 (--weight-std): at HF's 0.02 every answer is one token
    r = subprocess.run([sys.executable, "-m", "models.export", "--tiny", "llava_onevision_196", "--seed", "2",
                        "--weight-std", "0.3", "--out", export], cwd=root, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    frames = frames_npy(24, 384, seed=5)
    import numpy as np

    np.save(work / "video.npy", frames)
    questions = [{"id": f"q{i}", "time": t, "question": f"What is shown {i}?"} for i, t in enumerate(TIMES)]
    (work / "streams.json").write_text(json.dumps({"streams": [{"id": "s", "video": "video.npy", "questions": questions}]}))
    config = yaml.safe_load((root / "experiments/methods/mukv.yaml").read_text())
    config.update(_base_=str(root / "experiments/methods/mukv.yaml"), name="mukv_parity",
                  runtime={"device": "cpu", "dtype": "float32", "threads": 2, "seed": 0},
                  backbone={"type": "torchscript", "options": {"export": str(export)}},
                  benchmark={"type": "stream_list", "options": {"annotations": str(work / "streams.json")}},
                  output={"dir": str(work / "results")})
    config = {k: config[k] for k in ("_base_", "name", "runtime", "backbone", "benchmark", "output")}
    config["retrieval"] = {"options": {"blocks": BLOCKS}}
    config["stream"] = {"fps": 1.0, "chunk_frames": CHUNK, "max_new_tokens": STEPS, "min_video_frames": 15}
    (work / "mukv.yaml").write_text(yaml.safe_dump(config))
    r = subprocess.run([svqa_bin, "run", work / "mukv.yaml"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    records = [json.loads(line) for line in (work / "results/mukv_parity/predictions.jsonl").read_text().splitlines()]
    resolved = yaml.safe_load(subprocess.run([svqa_bin, "validate", work / "mukv.yaml", "--dump=set"], capture_output=True,
                                             text=True, check=True).stdout)
    return export, frames, records, resolved


def reference_run(export, frames, resolved):
    manifest = json.loads((export / "manifest.json").read_text())
    model = transformers.LlavaOnevisionForConditionalGeneration.from_pretrained(
        export / "hf", dtype=torch.float32, attn_implementation="eager").eval()
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(export / "hf" / "tokenizer.json"))
    enc, ret, stream = resolved["encoding"]["options"], resolved["retrieval"]["options"], resolved["stream"]
    by_size = lambda d: {49: d["patch"], 196: d["frame"], 784: d["segment"]}  # noqa: E731
    settings = {"chunk": CHUNK, "alpha": by_size(enc["alpha"]), "keep_ratio": by_size(enc["keep_ratio"]),
                "blocks": by_size(ret["blocks"]), "lambda": {49: ret["lambda"]["patch"], 196: ret["lambda"]["frame"]},
                "rerank_top_n": ret["context_segments"], "prompt": stream["answer_prompt"]}
    ref = MukvReference(model, manifest, tok, settings)
    ref.encode_init_prompt(stream["sink_prompt"])
    encoded, chunks, out = 0, [], []
    for t in TIMES:
        end = int(t * stream["fps"])  # scripts/run_mukv_rvs_ego.py: frames [int(encoded end), int(end_time · fps))
        if end > encoded:
            ref.encode_video(frames[encoded:end], encoded)
            chunks += [(s, min(CHUNK, end - s)) for s in range(encoded, end, CHUNK)]
            encoded = end
        chosen, ids = ref.question_answering(f"What is shown {len(out)}?", STEPS)
        out.append((end, chosen, ids, svqa_block_ids(ref.store, chunks)))
    return out


def test_mukv_preset_retrieves_and_answers_as_the_reference(setup):
    export, frames, records, resolved = setup
    assert resolved["encoding"]["options"]["segment_leftovers"] == "drop"
    reference = reference_run(export, frames, resolved)
    answers = set()
    for rec, (end, chosen, ids, svqa_id) in zip(sorted(records, key=lambda r: r["time"]), reference):
        assert "error" not in rec, rec["error"]
        assert rec["frames_encoded"] == end, rec["question_id"]
        for layer in rec["retrieved"]:
            assert layer == [svqa_id[c] for c in chosen], rec["question_id"]
        assert rec["prediction_ids"] == ids, rec["question_id"]
        answers.add(tuple(ids))
    assert len(answers) > 1  # the weights' scale makes answers differ: equality above means something
