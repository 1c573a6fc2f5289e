"""Image-text exports (`python -m models.export.image_text`) run by C++ (`svqa embed`) against the
Hugging Face SigLIP model on a tiny random export: the same input ids as SiglipTokenizer with
padding="max_length", truncation=True on tricky strings, the same L2-normalised image and text
embeddings (fp32, ≤ 1e-4); broken exports are one-line errors. CLIP and PE-Core: test_image_text_clip.py."""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
import torch

TEXTS = [
    "What is the color of the car?", "WHAT IS THE COLOR OF THE CAR", "  leading and trailing  ",
    "tabs\tand\nnewlines\r\n here", "punctuation!!! (a) [b] {c} ... 'quotes' \"double\" a-b_c", "3.14 and 2,000",
    "café naïve résumé", "İstanbul", "ΟΔΟΣ ΣΑΣ. Σ", "STRASSE straße", "视频中的人在做什么", "emoji 🎥 here",
    "\u00a0non-breaking\u3000ideographic\u2009thin", "▁underline", "▁▁x", "", " ", "?!", "with </s> inside",
    "</s>", "</s> first", "<unk> starts", "x</s>y", "the dog " * 20, "red blue green yellow left right up down cat",
]


def run(args, timeout=120, **kw):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout, **kw)


@pytest.fixture(scope="module")
def export(tmp_path_factory, root):
    out = tmp_path_factory.mktemp("siglip") / "export"
    r = run([sys.executable, "-m", "models.export.image_text", "--tiny", "siglip", "--seed", "0", "--out", out],
            cwd=root)
    assert r.returncode == 0, r.stderr
    return out


@pytest.fixture(scope="module")
def hf(export):
    import transformers

    model = transformers.SiglipModel.from_pretrained(export / "hf", dtype=torch.float32).eval()
    return model, transformers.SiglipTokenizer.from_pretrained(export / "hf")


def embed(svqa_bin, export, tmp_path, *args):
    out = tmp_path / "emb.npy"
    r = run([svqa_bin, "embed", "--model", export, *args, "--out", out])
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout), np.load(out)


def normalised(x):
    return x / x.norm(p=2, dim=-1, keepdim=True)


def test_image_embeddings_equal_hf(svqa_bin, export, hf, tmp_path):
    model, _ = hf
    spec = json.loads((export / "manifest.json").read_text())["image"]
    # At the model's size, so SiglipImageProcessor would not resize: rescale + normalise, fused as HF does.
    frames = np.random.default_rng(0).integers(0, 256, size=(5, spec["height"], spec["width"], 3), dtype=np.uint8)
    np.save(tmp_path / "frames.npy", frames)
    out, ours = embed(svqa_bin, export, tmp_path, "--frames", tmp_path / "frames.npy")
    x = torch.from_numpy(frames).permute(0, 3, 1, 2).float()
    mean = torch.tensor(spec["mean"], dtype=torch.float32).view(1, 3, 1, 1) / spec["rescale_factor"]
    std = torch.tensor(spec["std"], dtype=torch.float32).view(1, 3, 1, 1) / spec["rescale_factor"]
    with torch.no_grad():
        want = normalised(model.get_image_features(pixel_values=(x - mean) / std).pooler_output).numpy()
    assert out["shape"] == list(want.shape)
    err = np.abs(ours - want).max()
    print(f"image embeddings: max |Δ| = {err:.3g}")
    assert err <= 1e-4
    assert np.allclose(np.linalg.norm(ours, axis=1), 1, atol=1e-5)


def test_text_ids_and_embeddings_equal_hf(svqa_bin, export, hf, tmp_path):
    model, tok = hf
    max_length = json.loads((export / "manifest.json").read_text())["text"]["max_length"]
    out, ours = embed(svqa_bin, export, tmp_path, *[a for t in TEXTS for a in ("--text", t)])
    want_ids = [tok(t, padding="max_length", truncation=True, max_length=max_length)["input_ids"] for t in TEXTS]
    mismatches = [(t, o, w) for t, o, w in zip(TEXTS, out["input_ids"], want_ids) if o != w]
    assert not mismatches, f"{len(mismatches)} of {len(TEXTS)} differ, first: {mismatches[0]}"
    assert any(len(tok(t)["input_ids"]) > max_length for t in TEXTS), "a text must be truncated"
    assert any(tok.unk_token_id in ids for ids in want_ids), "a text must reach <unk>"
    with torch.no_grad():
        want = normalised(model.get_text_features(input_ids=torch.tensor(want_ids)).pooler_output).numpy()
    err = np.abs(ours - want).max()
    print(f"text embeddings: max |Δ| = {err:.3g}")
    assert err <= 1e-4


def test_broken_exports_are_one_line_errors(svqa_bin, export, tmp_path):
    def fails(model_dir, expected, *args):
        r = run([svqa_bin, "embed", "--model", model_dir, *(args or ["--text", "a dog"])])
        assert r.returncode == 1, r.stderr
        assert r.stderr.count("\n") == 1, r.stderr
        assert r.stderr.startswith("svqa embed: error: ") and expected in r.stderr, r.stderr

    fails(tmp_path / "nope", f"{tmp_path / 'nope'}: image-text export directory not found")
    broken = tmp_path / "broken"
    shutil.copytree(export, broken, ignore=shutil.ignore_patterns("hf"))
    manifest = json.loads((broken / "manifest.json").read_text())

    def write(**changes):
        (broken / "manifest.json").write_text(json.dumps({**manifest, **changes}))

    write(format_version=99)
    fails(broken, "format_version: this svqa reads version 1, the export is version 99")
    write(architecture="bert")
    fails(broken, 'architecture: expected "siglip", "clip" or "pe_core", got "bert"')
    write(format="svqa-export")
    fails(broken, "a Video-LLM export, not an image-text model")
    write(text={**manifest["text"], "max_length": "64"})
    fails(broken, "text.max_length: expected an integer in [1, 8192]")
    write(text={**manifest["text"], "max_length": 10**12})  # once a std::bad_alloc per question, rc 0
    fails(broken, "text.max_length: expected an integer in [1, 8192], got 1000000000000")
    write()
    (broken / "manifest.json").unlink()
    os.mkfifo(broken / "manifest.json")  # once blocked forever
    fails(broken, f"{broken / 'manifest.json'}: is a FIFO (named pipe), expected a JSON file")
    (broken / "manifest.json").unlink()
    write()
    (broken / "image.pt").unlink()
    fails(broken, f"{broken / 'image.pt'}: missing (listed in {broken / 'manifest.json'} as files.image")
    (broken / "manifest.json").unlink()
    fails(broken, f"{broken / 'manifest.json'}: not found")

    r = run([svqa_bin, "embed", "--model", export])
    assert r.returncode == 2 and "expected either --frames SRC or --text TEXT" in r.stderr
