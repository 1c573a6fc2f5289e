"""python -m models.export.image_text (--model DIR | --tiny siglip|clip|pe_core [--seed N]) --out DIR [--dtype float32]

Exports the image-text model that external retrieval (ReKV §3.6, Mem-Stream's external expert)
embeds frames and questions with: DIR/image.pt (pixels [N,3,S,S] → L2-normalised image embeddings
[N,D] float32), DIR/text.pt (input_ids [1,T] int64 → L2-normalised text embedding [1,D] float32),
the tokenizer (SigLIP: DIR/spiece.model, the SentencePiece model exactly as the HF tokenizer runs
it; CLIP and PE-Core: DIR/bpe.json, CLIP's BPE) and DIR/manifest.json, written last.

  SigLIP   a Hugging Face SiglipModel directory (model_type siglip)
  CLIP     a Hugging Face CLIPModel directory (model_type clip), e.g. openai/clip-vit-large-patch14
  PE-Core  an open_clip directory (open_clip_config.json + weights), e.g. timm/PE-Core-L-14-336;
           open_clip and timm come from .venv/hf-vision (models/export/vision_deps.py)

With --tiny also DIR/hf/ for SigLIP and CLIP (the random HF model and its tokenizer) so anyone can
compare; a tiny PE-Core is rebuilt from --seed (models/export/image_text_clip.make_tiny_pe_core).
"""

import argparse
import io
import json
import pathlib
import random
import sys
import time
import warnings

import torch
from torch import nn

from . import processor_config

FORMAT_VERSION = 1
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
# Export-time self-check tolerance per dtype (fp32 is the one the parity tests hold to 1e-4).
CHECK_ATOL = {torch.float32: 1e-4, torch.float16: 5e-2, torch.bfloat16: 1e-1}

# The HF SiglipImageProcessor's class defaults (transformers 5.23): the tiny model's processor.
SIGLIP_PROCESSOR_DEFAULTS = {"size": {"height": 224, "width": 224}, "image_mean": [0.5, 0.5, 0.5],
                             "image_std": [0.5, 0.5, 0.5], "rescale_factor": 1 / 255, "resample": 3,
                             "do_resize": True, "do_rescale": True, "do_normalize": True}


class ImageEmbedder(nn.Module):
    """pixels [N,3,S,S] → get_image_features (SigLIP: attention-pooling head) → L2-normalised, float32."""

    def __init__(self, model):
        super().__init__()
        self.vision_model = model.vision_model

    def forward(self, pixels):
        e = self.vision_model(pixel_values=pixels).pooler_output.float()
        return e / e.norm(p=2, dim=-1, keepdim=True)


class TextEmbedder(nn.Module):
    """input_ids [1,T] → get_text_features (last position + head) → L2-normalised, float32.

    No attention mask: SigLIP was trained on max_length-padded ids with padding attended to
    (big_vision), and pools the last position, which is padding for short texts.
    """

    def __init__(self, model):
        super().__init__()
        self.text_model = model.text_model

    def forward(self, input_ids):
        e = self.text_model(input_ids=input_ids).pooler_output.float()
        return e / e.norm(p=2, dim=-1, keepdim=True)


def normalised(x):
    x = x.float()
    return x / x.norm(p=2, dim=-1, keepdim=True)


def check(name, got, want, dtype):
    err = (got.float() - want.float()).abs().max().item()
    if err > CHECK_ATOL[dtype]:
        raise SystemExit(f"export: traced {name} differs from the Hugging Face forward by {err:.3g}")
    return err


def trace_image(module, dtype, size):
    traced = torch.jit.trace(module.eval(), (torch.randn(2, 3, size, size, dtype=dtype),))
    errors = []
    for n in (3, 1):  # batch sizes other than the traced one
        x = torch.randn(n, 3, size, size, dtype=dtype)
        errors.append(check(f"image (batch {n})", traced(x), module(x), dtype))
    return traced, max(errors)


def trace_text(module, dtype, max_length, vocab_size, fixed_length=False):
    """`fixed_length`: the tower takes exactly max_length ids (open_clip's causal mask is a constant of that size)."""
    gen = torch.Generator().manual_seed(0)
    traced = torch.jit.trace(module.eval(), (torch.randint(0, vocab_size, (1, max_length), generator=gen),))
    errors = []
    lengths = (max_length,) if fixed_length else (max_length, max(1, max_length // 2))
    for t in lengths:  # a second length proves no shape was baked in
        ids = torch.randint(0, vocab_size, (1, t), generator=gen)
        errors.append(check(f"text (length {t})", traced(ids), module(ids), dtype))
    return traced, max(errors)


# --- tiny random SigLIP -------------------------------------------------------------------------

_WORDS = ("the a what is color of object in video frame person doing where when who how many red blue green "
          "yellow moves left right up down table kitchen car road dog cat before after first last time scene "
          "photo of picture man woman holds ball runs walks sits open door window night day 0 1 2 3 4 5").split()


def train_spiece(path, vocab_size=160):
    """A unigram SentencePiece model with SigLIP's special ids (pad 0, eos 1, unk 2, no bos)."""
    import sentencepiece as spm

    rng = random.Random(0)
    corpus = [" ".join(rng.choice(_WORDS) for _ in range(10)) for _ in range(600)]
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(corpus), model_writer=model, vocab_size=vocab_size,
                                   model_type="unigram", pad_id=0, eos_id=1, unk_id=2, bos_id=-1,
                                   pad_piece="<pad>", eos_piece="</s>", unk_piece="<unk>", minloglevel=2,
                                   hard_vocab_limit=False)
    path.write_bytes(model.getvalue())


def make_tiny_siglip(seed, hf_dir):
    """Builds, seeds and saves a tiny random SigLIP: 32 px images, patch 8, hidden 32, 2 layers, 4 heads."""
    import transformers

    hf_dir.mkdir(parents=True, exist_ok=True)
    train_spiece(hf_dir / "spiece.model")
    max_length = 16
    tok = transformers.SiglipTokenizer(vocab_file=str(hf_dir / "spiece.model"), model_max_length=max_length)
    common = dict(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4)
    config = transformers.SiglipConfig(
        text_config=dict(vocab_size=tok.vocab_size, max_position_embeddings=max_length, pad_token_id=tok.pad_token_id,
                         bos_token_id=None, eos_token_id=tok.eos_token_id, **common),
        vision_config=dict(image_size=32, patch_size=8, **common))
    torch.manual_seed(seed)
    model = transformers.SiglipModel(config).eval()
    processor = {**SIGLIP_PROCESSOR_DEFAULTS, "size": {"height": 32, "width": 32}}
    save_hf(hf_dir, model, tok, "SiglipImageProcessor", processor)
    return model, tok, processor


def save_hf(hf_dir, model, tok, processor_type, processor):
    """A tiny model's HF directory: weights, tokenizer and preprocessor_config.json, for anyone to compare."""
    model.save_pretrained(hf_dir)
    tok.save_pretrained(hf_dir)
    (hf_dir / "preprocessor_config.json").write_text(
        json.dumps({"image_processor_type": processor_type, **processor}, indent=2) + "\n")


def saved_processor(model_dir, required):
    """The checkpoint's image processor settings, read as JSON (HF's image processor classes need
    torchvision, which the exporter does not import): `required` keys must be saved, only
    processor_config.CLASS_CONSTANTS may come from the class default (announced)."""
    saved, where = processor_config.find(model_dir, "image_processor")
    constants = [k for k in processor_config.CLASS_CONSTANTS if k != "do_center_crop" or "crop_size" in required]
    return processor_config.settings(saved, where, required, constants)


def load_siglip(model_dir, dtype):
    import transformers

    model = transformers.SiglipModel.from_pretrained(model_dir, dtype=dtype).eval()
    tok = transformers.SiglipTokenizer.from_pretrained(model_dir)
    processor = saved_processor(model_dir, ("size", "image_mean", "image_std"))
    return model, tok, processor


# --- manifest -----------------------------------------------------------------------------------

def image_spec(processor, model):
    """The processor as svqa's ImageSpec: SigLIP resizes to height × width (no crop), bicubic, antialiased."""
    if not (processor["do_resize"] and processor["do_rescale"] and processor["do_normalize"]):
        raise SystemExit("export: preprocessor_config.json turns off resize, rescale or normalize; svqa always does all three")
    if processor["resample"] != 3:
        raise SystemExit(f"export: preprocessor_config.json: resample {processor['resample']} is not bicubic (3), "
                         "the only resize svqa implements")
    size = processor["size"]
    image_size = model.config.vision_config.image_size
    if (size.get("height"), size.get("width")) != (image_size, image_size):
        raise SystemExit(f"export: preprocessor_config.json: size {size} is not the model's {image_size}×{image_size}")
    return {"resize": "fixed", "height": image_size, "width": image_size,
            "rescale_factor": float(processor["rescale_factor"]),
            "mean": [float(x) for x in processor["image_mean"]], "std": [float(x) for x in processor["image_std"]]}


def text_spec(tok, model):
    """What C++ needs to reproduce `tokenizer(text, padding="max_length", truncation=True)` (SiglipTokenizer)."""
    max_length = min(int(tok.model_max_length), int(model.config.text_config.max_position_embeddings))
    added = []
    for i, t in sorted(tok.added_tokens_decoder.items()):
        if t.single_word or not t.content:
            raise SystemExit(f"export: added token {t.content!r}: single_word or empty tokens are not supported")
        added.append({"content": t.content, "id": int(i), "lstrip": bool(t.lstrip), "rstrip": bool(t.rstrip),
                      "special": t.content in tok.all_special_tokens})
    return {"tokenizer": "siglip", "max_length": max_length, "pad_id": int(tok.pad_token_id),
            "eos_id": int(tok.eos_token_id), "unk_piece": str(tok.unk_token), "lowercase": bool(tok.do_lower_case),
            "remove_punctuation": True, "added_tokens": added}


def siglip(model, tok, processor):
    spec = text_spec(tok, model)
    # The model as the HF tokenizer runs it (legacy=False tokenizers turn add_dummy_prefix off in memory).
    return dict(architecture="siglip", image_size=model.config.vision_config.image_size,
                image_spec=image_spec(processor, model), text_spec=spec,
                files={"spiece": ("spiece.model", tok.sp_model.serialized_model_proto())},
                image=ImageEmbedder(model), text=TextEmbedder(model), context_length=spec["max_length"],
                vocab_size=tok.vocab_size, dtype=model.dtype)


def load_checkpoint(model_dir, dtype):
    """The export description of a SigLIP / CLIP (Hugging Face) or PE-Core (open_clip) directory."""
    from models.export import image_text_clip as clip

    model_dir = pathlib.Path(model_dir)
    if (model_dir / "open_clip_config.json").exists():
        return clip.pe_core(*clip.load_pe_core(model_dir, dtype))
    if not (model_dir / "config.json").exists():
        raise SystemExit(f"export: {model_dir}: neither config.json (Hugging Face) nor open_clip_config.json found")
    model_type = json.loads((model_dir / "config.json").read_text()).get("model_type")
    if model_type == "siglip":
        return siglip(*load_siglip(model_dir, dtype))
    if model_type == "clip":
        return clip.clip(*clip.load_clip(model_dir, dtype))
    raise SystemExit(f"export: {model_dir}: model_type '{model_type}' is not supported (expected siglip or clip)")


def make_tiny(kind, seed, hf_dir, dtype):
    from models.export import image_text_clip as clip

    if kind == "siglip":
        model, tok, processor = make_tiny_siglip(seed, hf_dir)
        return siglip(model.to(dtype), tok, processor)
    if kind == "clip":
        model, tok, processor = clip.make_tiny_clip(seed, hf_dir)
        return clip.clip(model.to(dtype), tok, processor)
    model, tok, preprocess = clip.make_tiny_pe_core(seed)
    return clip.pe_core(model.to(dtype), tok, preprocess)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m models.export.image_text", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--model", help="a SigLIP or CLIP Hugging Face directory, or a PE-Core open_clip directory")
    source.add_argument("--tiny", choices=("siglip", "clip", "pe_core"), help="a tiny random-weight model")
    parser.add_argument("--seed", type=int, default=0, help="weights seed for --tiny")
    parser.add_argument("--dtype", choices=DTYPES, default="float32")
    parser.add_argument("--out", required=True, help="export directory (created)")
    args = parser.parse_args(argv)

    warnings.filterwarnings("ignore", message=".*TorchScript.*")  # deprecated upstream; torch is pinned
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    start = time.time()
    dtype = DTYPES[args.dtype]
    e = make_tiny(args.tiny, args.seed, out / "hf", dtype) if args.tiny else load_checkpoint(args.model, dtype)

    with torch.no_grad():
        image, image_err = trace_image(e["image"], dtype, e["image_size"])
        text, text_err = trace_text(e["text"], dtype, e["context_length"], e["vocab_size"], e.get("fixed_text_length", False))
        embedding_dim = int(text(torch.zeros(1, e["context_length"], dtype=torch.long)).shape[-1])
    image.save(str(out / "image.pt"))
    text.save(str(out / "text.pt"))
    files = {"image": "image.pt", "text": "text.pt"}
    for key, (name, data) in e["files"].items():
        (out / name).write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
        files[key] = name
    manifest = {
        "format": "svqa-image-text",
        "format_version": FORMAT_VERSION,
        "architecture": e["architecture"],
        "source": args.model or f"tiny:{args.tiny}:seed={args.seed}",
        "dtype": args.dtype,
        "embedding_dim": embedding_dim,
        "image": e["image_spec"],
        "text": e["text_spec"],
        "files": files,
    }
    tmp = out / "manifest.json.tmp"
    tmp.write_text(json.dumps(manifest, indent=2) + "\n")
    tmp.replace(out / "manifest.json")  # written last: a manifest means a complete export
    print(f"exported {e['architecture']} ({args.dtype}, format {FORMAT_VERSION}) to {out} in {time.time() - start:.1f} s; "
          f"trace vs eager max |Δ|: image {image_err:.2g}, text {text_err:.2g}", file=sys.stderr)


if __name__ == "__main__":
    main()
