"""Answers cut mid-character by max_new_tokens (common with CJK and emoji): the byte-level BPE
ids are not valid UTF-8. svqa decodes them as Hugging Face does (each invalid sequence → U+FFFD),
prints them with `svqa probe` and records them with `svqa run` (raw ids kept beside the text)."""

import json
import shutil
import subprocess

import numpy as np
from experiment_files import write_experiment
from tokenizers import Tokenizer

QUESTION = "What is the color of the object?"


def byte_token(byte):
    """GPT-2's printable stand-in for a byte (bytes_to_unicode)."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    if byte in printable:
        return chr(byte)
    return chr(256 + sum(1 for b in range(byte) if b not in printable))


def cut_export(export, dest):
    """A copy of `export` whose greedy output is only the lone bytes 0xE8 and 0xE4 (leads of 3-byte
    characters, as in 视 and 中), so every answer is cut mid-character. Its final norm passes one
    hidden dimension k only, and the (tied) output embeddings are zero in k except +10 for one of the
    two byte tokens and -10 for the other: the argmax is one of them at every step."""
    import torch

    shutil.copytree(export, dest, ignore=shutil.ignore_patterns("hf"))
    tok = Tokenizer.from_file(str(dest / "tokenizer.json"))
    leads = [tok.token_to_id(byte_token(0xE8)), tok.token_to_id(byte_token(0xE4))]
    text = torch.jit.load(str(dest / "text.pt"))
    k = 5
    with torch.no_grad():
        text.norm.weight.zero_()
        text.norm.weight[k] = 1.0
        for weight in {id(w): w for w in (text.embed_tokens.weight, text.lm_head.weight)}.values():
            weight[:, k] = 0.0
            weight[leads[0], k], weight[leads[1], k] = 10.0, -10.0
    text.save(str(dest / "text.pt"))
    return set(leads), tok


def probe(svqa_bin, export, frames):
    return subprocess.run([svqa_bin, "probe", "--export", export, "--frames", frames, "--prompt", QUESTION,
                           "--generate", "8"], capture_output=True, text=True)


def test_probe_prints_an_answer_cut_mid_character(svqa_bin, tiny_export, tmp_path):
    leads, tok = cut_export(tiny_export("llava_onevision"), tmp_path / "cut")
    np.save(tmp_path / "frames.npy", np.random.default_rng(1).integers(0, 256, (2, 48, 48, 3), dtype=np.uint8))
    r = probe(svqa_bin, tmp_path / "cut", tmp_path / "frames.npy")
    assert r.returncode == 0, r.stderr  # was: [json.exception.type_error.316] invalid UTF-8 byte
    out = json.loads(r.stdout)
    assert len(out["generated_ids"]) == 8 and set(out["generated_ids"]) <= leads
    assert out["text"] == tok.decode(out["generated_ids"], skip_special_tokens=False) == "\ufffd" * 8


def test_run_records_an_answer_cut_mid_character_with_its_ids(svqa_bin, tiny_export, tmp_path):
    leads, tok = cut_export(tiny_export("llava_onevision"), tmp_path / "cut")
    np.save(tmp_path / "clip.npy", np.random.default_rng(2).integers(0, 256, (4, 48, 48, 3), dtype=np.uint8))
    (tmp_path / "streams.json").write_text(json.dumps({"streams": [
        {"id": "clip", "video": "clip.npy", "questions": [{"id": "q1", "time": 1.0, "question": QUESTION},
                                                          {"id": "q2", "time": 1.5, "question": QUESTION,
                                                           "options": ["red", "blue"], "answer": "red"}]}]}))
    write_experiment(tmp_path / "exp.yaml", "cut", tmp_path / "cut", tmp_path / "streams.json",
                     stream="{fps: 2, max_new_tokens: 5}")
    r = subprocess.run([svqa_bin, "run", tmp_path / "exp.yaml", "--out", tmp_path / "results"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr  # was: the record writer's invalid UTF-8 error ended the run
    records = [json.loads(line) for line in (tmp_path / "results" / "cut" / "predictions.jsonl").read_text().splitlines()]
    assert [rec["question_id"] for rec in records] == ["q1", "q2"]
    for rec in records:
        assert "error" not in rec
        assert len(rec["prediction_ids"]) == 5 and set(rec["prediction_ids"]) <= leads  # the raw ids, kept
        assert rec["prediction"] == tok.decode(rec["prediction_ids"], skip_special_tokens=False) == "\ufffd" * 5
