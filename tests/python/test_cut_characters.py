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


def cut_export(export, dest):
    """A copy of `export` whose chat template ends with 猫 (bytes E7 8C AB), which the tiny tokenizer
    never saw and so spells as three byte tokens. A tiny random model with tied embeddings echoes
    its last input token, so it answers with lone continuation bytes (AB …): an answer that is not
    valid UTF-8, as one cut mid-character by max_new_tokens is."""
    shutil.copytree(export, dest, ignore=shutil.ignore_patterns("hf"))
    manifest = json.loads((dest / "manifest.json").read_text())
    manifest["chat"]["video_prompt"] += "猫"
    (dest / "manifest.json").write_text(json.dumps(manifest))
    hf = Tokenizer.from_file(str(dest / "tokenizer.json"))
    assert len(hf.encode("猫", add_special_tokens=False).ids) == 3, "the tiny tokenizer learnt 猫: pick another character"
    return hf


def assert_cut(ids, text, hf):
    """`ids` are not valid UTF-8, and svqa's `text` is Hugging Face's decoding of them (U+FFFD for each bad sequence)."""
    assert "\ufffd" in hf.decode(ids, skip_special_tokens=False), "precondition: the answer must not be valid UTF-8"
    assert text == hf.decode(ids, skip_special_tokens=False)


def probe(svqa_bin, export, frames):
    return subprocess.run([svqa_bin, "probe", "--export", export, "--frames", frames, "--prompt", QUESTION,
                           "--generate", "8"], capture_output=True, text=True)


def test_probe_prints_an_answer_cut_mid_character(svqa_bin, tiny_export, tmp_path):
    np.save(tmp_path / "frames.npy", np.random.default_rng(1).integers(0, 256, (2, 48, 48, 3), dtype=np.uint8))
    hf = cut_export(tiny_export("llava_onevision"), tmp_path / "cut")
    r = probe(svqa_bin, tmp_path / "cut", tmp_path / "frames.npy")
    assert r.returncode == 0, r.stderr  # was: [json.exception.type_error.316] invalid UTF-8 byte
    out = json.loads(r.stdout)
    assert_cut(out["generated_ids"], out["text"], hf)


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

    hf = cut_export(export, tmp_path / "cut_export")
    rec = run(tmp_path / "cut_export", tmp_path / "cut_results")
    assert "error" not in rec
    assert len(rec["prediction_ids"]) == 6  # the raw ids, beside the text
    assert_cut(rec["prediction_ids"], rec["prediction"], hf)
