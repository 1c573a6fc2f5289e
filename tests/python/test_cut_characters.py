"""Answers cut mid-character by max_new_tokens (common with CJK and emoji): the byte-level BPE
ids are not valid UTF-8. svqa decodes them as Hugging Face does (each invalid sequence → U+FFFD),
prints them with `svqa probe` and records them with `svqa run` (raw ids kept beside the text)."""

import json
import shutil
import subprocess

import numpy as np
import pytest
from tokenizers import Tokenizer

QUESTION = "What is the color of the object?"


def byte_token(byte):
    """GPT-2's printable stand-in for a byte (bytes_to_unicode)."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    if byte in printable:
        return chr(byte)
    return chr(256 + sum(1 for b in range(byte) if b not in printable))


def cut_export(export, dest, generated, prompt_text):
    """A copy of `export` whose tokenizer decodes one of the `generated` ids as the lone byte 0xE8
    (the first byte of 视): its vocabulary entry is swapped with that byte's. The model and the
    prompt's ids are unchanged, so greedy decoding yields the same ids, now cut mid-character."""
    shutil.copytree(export, dest, ignore=shutil.ignore_patterns("hf"))
    data = json.loads((dest / "tokenizer.json").read_text())
    vocab = data["model"]["vocab"]
    by_id = {i: t for t, i in vocab.items()}
    hf = Tokenizer.from_file(str(dest / "tokenizer.json"))
    lead = byte_token(0xE8)
    # An id whose text cannot occur in the prompt: swapping it cannot change the prompt's ids.
    target = next(i for i in generated if i in by_id and by_id[i] != lead and hf.decode([i]).strip()
                  and hf.decode([i]) not in prompt_text)
    vocab[by_id[target]], vocab[lead] = vocab[lead], target
    (dest / "tokenizer.json").write_text(json.dumps(data))
    return target, Tokenizer.from_file(str(dest / "tokenizer.json"))


def probe(svqa_bin, export, frames):
    return subprocess.run([svqa_bin, "probe", "--export", export, "--frames", frames, "--prompt", QUESTION,
                           "--generate", "8"], capture_output=True, text=True)


def test_probe_prints_an_answer_cut_mid_character(svqa_bin, tiny_export, tmp_path):
    export = tiny_export("llava_onevision")
    np.save(tmp_path / "frames.npy", np.random.default_rng(1).integers(0, 256, (2, 48, 48, 3), dtype=np.uint8))
    r = probe(svqa_bin, export, tmp_path / "frames.npy")
    assert r.returncode == 0, r.stderr
    ids = json.loads(r.stdout)["generated_ids"]
    manifest = json.loads((export / "manifest.json").read_text())
    _, hf = cut_export(export, tmp_path / "cut", ids, manifest["chat"]["video_prompt"] + QUESTION)

    r = probe(svqa_bin, tmp_path / "cut", tmp_path / "frames.npy")
    assert r.returncode == 0, r.stderr  # was: [json.exception.type_error.316] invalid UTF-8 byte
    out = json.loads(r.stdout)
    assert out["generated_ids"] == ids
    assert "\ufffd" in out["text"]
    assert out["text"] == hf.decode(ids, skip_special_tokens=False)


def test_run_records_an_answer_cut_mid_character_with_its_ids(svqa_bin, tiny_export, tmp_path):
    export = tiny_export("llava_onevision")
    np.save(tmp_path / "clip.npy", np.random.default_rng(2).integers(0, 256, (4, 48, 48, 3), dtype=np.uint8))
    (tmp_path / "streams.json").write_text(json.dumps({"streams": [
        {"id": "clip", "video": "clip.npy", "questions": [{"id": "q1", "time": 1.0, "question": QUESTION}]}]}))

    def run(export_dir, out):
        (tmp_path / "exp.yaml").write_text(f"""
name: cut
backbone: {{type: torchscript, options: {{export: {export_dir}}}}}
encoding: {{type: rekv_sliding_window}}
retrieval: {{type: full_context}}
benchmark: {{type: stream_list, options: {{annotations: {tmp_path / 'streams.json'}}}}}
stream: {{fps: 2, max_new_tokens: 6}}
""")
        r = subprocess.run([svqa_bin, "run", tmp_path / "exp.yaml", "--out", out], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return json.loads((out / "cut" / "predictions.jsonl").read_text().splitlines()[0])

    first = run(export, tmp_path / "plain")
    manifest = json.loads((export / "manifest.json").read_text())
    _, hf = cut_export(export, tmp_path / "cut_export", first["prediction_ids"],
                       manifest["chat"]["video_prompt"] + QUESTION)
    rec = run(tmp_path / "cut_export", tmp_path / "cut_results")
    assert "error" not in rec
    assert rec["prediction_ids"] == first["prediction_ids"]  # the raw ids, beside the text
    assert "\ufffd" in rec["prediction"]
    assert rec["prediction"] == hf.decode(rec["prediction_ids"], skip_special_tokens=False)
