"""CLIP (Hugging Face CLIPModel) and PE-Core (open_clip, its reference packaging) for
models.export.image_text: the model, its image and text embedders, and what C++ needs to tokenize
and preprocess as the library does (manifest "image" / "text", DIR/bpe.json).

Both tokenize with CLIP's byte-level BPE ("</w>" end-of-word suffix): DIR/bpe.json holds the BPE
model and CLIP's word pattern for models/bpe_tokenizer; the cleanup before it is "hf" (CLIPTokenizer:
NFC, whitespace, lowercase) or "open_clip" (SimpleTokenizer: ftfy, whitespace, lowercase; see
models/tokenizers/clip_text_tokenizer.h for what of ftfy C++ reproduces).

PE-Core needs open_clip and timm, which need torchvision: they are imported from .venv/hf-vision
(models/export/vision_deps.py), never from .venv.
"""

import contextlib
import gzip
import json

import torch
from torch import nn

from models.export import image_text, vision_deps

# CLIP's word pattern without its special tokens (C++ matches those itself, before or after cleanup).
WORD_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"""
HF_PATTERN = r"""<\|startoftext\|>|<\|endoftext\|>|""" + WORD_PATTERN
OPENAI_MEAN, OPENAI_STD = [0.48145466, 0.4578275, 0.40821073], [0.26862954, 0.26130258, 0.27577711]
CLIP_PROCESSOR_DEFAULTS = {"size": {"shortest_edge": 224}, "crop_size": {"height": 224, "width": 224},
                           "do_center_crop": True, "image_mean": OPENAI_MEAN, "image_std": OPENAI_STD,
                           "rescale_factor": 1 / 255, "resample": 3, "do_resize": True, "do_rescale": True,
                           "do_normalize": True}
TINY = dict(hidden=32, intermediate=48, layers=2, heads=4, image_size=32, patch=8, projection=16)


def normalised(x):
    x = x.float()
    return x / x.norm(p=2, dim=-1, keepdim=True)


class HfFeatures(nn.Module):
    """pixels [N,3,S,S] or ids [1,T] → CLIPModel.get_image_features / get_text_features, L2-normalised, float32.

    No attention mask for text: CLIP's text tower is causal and pools the first eos, so padding after it
    changes nothing."""

    def __init__(self, model, kind):
        super().__init__()
        self.model, self.kind = model, kind

    def forward(self, x):
        if self.kind == "image":
            return normalised(self.model.get_image_features(pixel_values=x).pooler_output)
        return normalised(self.model.get_text_features(input_ids=x).pooler_output)


class OpenClipFeatures(nn.Module):
    """pixels or ids → open_clip's encode_image / encode_text (causal text tower, argmax-eot pooling), L2-normalised."""

    def __init__(self, model, kind):
        super().__init__()
        self.model, self.kind = model, kind

    def forward(self, x):
        return normalised(self.model.encode_image(x) if self.kind == "image" else self.model.encode_text(x))


def bpe_json(vocab, merges):
    """tokenizer.json for models/bpe_tokenizer: the BPE model and CLIP's word pattern, nothing else."""
    return json.dumps({
        "model": {"type": "BPE", "vocab": vocab, "merges": [" ".join(m) for m in merges],
                  "end_of_word_suffix": "</w>", "continuing_subword_prefix": "", "ignore_merges": False},
        "normalizer": None,
        "pre_tokenizer": {"type": "Split", "pattern": {"Regex": WORD_PATTERN}, "behavior": "Isolated", "invert": False},
        "added_tokens": [],
    }, ensure_ascii=False)


def clip_bpe_ranks():
    """CLIP's merges and vocabulary as open_clip ships them (bpe_simple_vocab_16e6.txt.gz, OpenAI's), read as a file."""
    path = vision_deps.HF_VISION / "open_clip" / "bpe_simple_vocab_16e6.txt.gz"
    if not path.exists():
        raise SystemExit(f"export: {path} not found (open_clip in .venv/hf-vision ships CLIP's BPE): run scripts/setup.sh")
    merges = [tuple(m.split()) for m in gzip.open(path).read().decode("utf-8").split("\n")[1:49152 - 256 - 2 + 1]]
    return merges


# --- Hugging Face CLIP ---------------------------------------------------------------------------

def make_tiny_clip(seed, hf_dir):
    """A tiny random CLIPModel with CLIP's real tokenizer (49408 tokens): 32 px images, patch 8, hidden 32, 2 layers."""
    import transformers
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    hf_dir.mkdir(parents=True, exist_ok=True)
    merges = clip_bpe_ranks()
    symbols = list(bytes_to_unicode().values())
    vocab = symbols + [s + "</w>" for s in symbols] + ["".join(m) for m in merges] + ["<|startoftext|>", "<|endoftext|>"]
    tok = transformers.CLIPTokenizer(vocab={t: i for i, t in enumerate(vocab)}, merges=list(merges),
                                     model_max_length=77)
    t = TINY
    common = dict(hidden_size=t["hidden"], intermediate_size=t["intermediate"], num_hidden_layers=t["layers"],
                  num_attention_heads=t["heads"])
    config = transformers.CLIPConfig(
        text_config=dict(vocab_size=len(vocab), max_position_embeddings=77, bos_token_id=tok.bos_token_id,
                         eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, **common),
        vision_config=dict(image_size=t["image_size"], patch_size=t["patch"], **common),
        projection_dim=t["projection"])
    torch.manual_seed(seed)
    model = transformers.CLIPModel(config).eval()
    processor = {**CLIP_PROCESSOR_DEFAULTS, "size": {"shortest_edge": t["image_size"]},
                 "crop_size": {"height": t["image_size"], "width": t["image_size"]}}
    image_text.save_hf(hf_dir, model, tok, "CLIPImageProcessor", processor)
    return model, tok, processor


def load_clip(model_dir, dtype):
    import transformers

    model = transformers.CLIPModel.from_pretrained(model_dir, dtype=dtype).eval()
    tok = transformers.CLIPTokenizer.from_pretrained(model_dir)
    return model, tok, image_text.saved_processor(model_dir, ("size", "crop_size", "image_mean", "image_std"))


def clip_image_spec(processor, image_size):
    p = processor
    if not (p["do_resize"] and p["do_rescale"] and p["do_normalize"] and p["do_center_crop"]):
        raise SystemExit("export: preprocessor_config.json turns off resize, crop, rescale or normalize; svqa does all four")
    if p["resample"] != 3:
        raise SystemExit(f"export: preprocessor_config.json: resample {p['resample']} is not bicubic (3)")
    crop, edge = p["crop_size"], p["size"].get("shortest_edge")
    if edge is None or (crop.get("height"), crop.get("width")) != (image_size, image_size) or edge < image_size:
        raise SystemExit(f"export: preprocessor_config.json: size {p['size']} / crop_size {crop} are not a shortest-edge "
                         f"resize followed by the model's {image_size}×{image_size} crop")
    return {"resize": "shortest_edge_crop", "shortest_edge": int(edge), "height": image_size, "width": image_size,
            "rescale_factor": float(p["rescale_factor"]), "mean": [float(x) for x in p["image_mean"]],
            "std": [float(x) for x in p["image_std"]]}


def clip_text_spec(tok, model):
    """What C++ needs for tokenizer(text, padding="max_length", truncation=True); refuses other pipelines."""
    backend = json.loads(tok.backend_tokenizer.to_str())
    norm = [n["type"] for n in (backend["normalizer"] or {}).get("normalizers", [])]
    pre = (backend["pre_tokenizer"] or {}).get("pretokenizers", [])
    if norm != ["NFC", "Replace", "Lowercase"] or len(pre) != 2 or pre[0].get("pattern", {}).get("Regex") not in (
            HF_PATTERN, WORD_PATTERN) or backend["model"].get("end_of_word_suffix") != "</w>":
        raise SystemExit("export: the CLIP tokenizer is not CLIPTokenizer's pipeline (NFC, whitespace, lowercase, "
                         "CLIP's word pattern, BPE with '</w>'); svqa reproduces only that one")
    added = [{"content": t["content"], "id": int(t["id"]), "lstrip": bool(t["lstrip"]), "rstrip": bool(t["rstrip"]),
              "special": bool(t["special"]), "normalized": bool(t["normalized"])} for t in backend["added_tokens"]]
    context = min(int(tok.model_max_length), int(model.config.text_config.max_position_embeddings))
    spec = {"tokenizer": "clip", "cleanup": "hf", "context_length": context, "bos_id": int(tok.bos_token_id),
            "eos_id": int(tok.eos_token_id), "pad_id": int(tok.pad_token_id), "added_tokens": added}
    vocab = backend["model"]["vocab"]
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in backend["model"]["merges"]]
    return spec, bpe_json(vocab, merges)


def clip(model, tok, processor):
    image_size = model.config.vision_config.image_size
    text, bpe = clip_text_spec(tok, model)
    return dict(architecture="clip", image_size=image_size,
                image_spec=clip_image_spec(processor, image_size), text_spec=text, files={"bpe": ("bpe.json", bpe)},
                image=HfFeatures(model, "image"), text=HfFeatures(model, "text"),
                context_length=text["context_length"], vocab_size=int(model.config.text_config.vocab_size), dtype=model.dtype)


# --- PE-Core (open_clip) ------------------------------------------------------------------------

@contextlib.contextmanager
def timm_overrides(**kwargs):
    """timm.create_model with `kwargs` forced, while open_clip builds its tower (a tiny PE-Core's sizes)."""
    import timm

    create = timm.create_model
    timm.create_model = lambda name, **kw: create(name, **{**kw, **kwargs})
    try:
        yield
    finally:
        timm.create_model = create


def make_tiny_pe_core(seed):
    """A tiny random PE-Core (timm's vit_pe_core ViT with RoPE and attention pooling; open_clip's text tower)."""
    vision_deps.use("PE-Core (open_clip, timm)")
    import open_clip
    from open_clip.model import CLIPTextCfg, CLIPVisionCfg, CustomTextCLIP

    t = TINY
    vision = CLIPVisionCfg(image_size=t["image_size"], timm_model_name="vit_pe_core_large_patch14_336",
                           timm_model_pretrained=False, timm_pool="map", timm_proj=None)
    text = CLIPTextCfg(context_length=32, vocab_size=49408, width=t["hidden"], heads=t["heads"], layers=t["layers"])
    torch.manual_seed(seed)
    with timm_overrides(img_size=t["image_size"], patch_size=t["patch"], embed_dim=t["hidden"], depth=t["layers"],
                        num_heads=t["heads"], ref_feat_shape=(4, 4), attn_pool_num_heads=t["heads"]):
        model = CustomTextCLIP(t["projection"], vision, text).eval()
    preprocess = {"mean": (0.5, 0.5, 0.5), "std": (0.5, 0.5, 0.5), "interpolation": "bilinear", "resize_mode": "squash"}
    return model, open_clip.SimpleTokenizer(context_length=32), preprocess


def load_pe_core(model_dir, dtype):
    vision_deps.use("PE-Core (open_clip, timm)")
    import open_clip

    model = open_clip.create_model(f"local-dir:{model_dir}", device="cpu").to(dtype).eval()
    tok = open_clip.get_tokenizer(f"local-dir:{model_dir}")
    return model, tok, dict(model.visual.preprocess_cfg)


def pe_core(model, tok, preprocess):
    import open_clip

    if not isinstance(tok, open_clip.SimpleTokenizer) or tok.clean_fn.__name__ != "_clean_lower" or tok.reduction_fn:
        raise SystemExit("export: the open_clip tokenizer is not SimpleTokenizer(clean='lower'); svqa reproduces only that one")
    if preprocess.get("resize_mode", "shortest") != "squash" or preprocess.get("interpolation") not in ("bilinear", "bicubic"):
        raise SystemExit(f"export: open_clip preprocess {preprocess} is not a squash resize (PE-Core's)")
    size = model.visual.image_size
    size = size[0] if isinstance(size, (tuple, list)) else size
    specials = {t: i for t, i in tok.encoder.items() if t in ("<start_of_text>", "<end_of_text>")}
    vocab = {t: i for t, i in tok.encoder.items() if t not in specials}
    merges = sorted(tok.bpe_ranks, key=tok.bpe_ranks.get)
    text = {"tokenizer": "clip", "cleanup": "open_clip", "context_length": int(tok.context_length),
            "bos_id": int(tok.sot_token_id), "eos_id": int(tok.eot_token_id), "pad_id": 0,
            "added_tokens": [{"content": t, "id": int(i), "lstrip": False, "rstrip": False, "special": True,
                              "normalized": False} for t, i in specials.items()]}
    image = {"resize": "fixed", "height": size, "width": size, "interpolation": preprocess["interpolation"],
             "rescale_factor": 1 / 255, "mean": [float(x) for x in preprocess["mean"]],
             "std": [float(x) for x in preprocess["std"]]}
    dtype = next(model.parameters()).dtype
    return dict(architecture="pe_core", image_size=size,
                image_spec=image, text_spec=text, files={"bpe": ("bpe.json", bpe_json(vocab, merges))},
                image=OpenClipFeatures(model, "image"), text=OpenClipFeatures(model, "text"),
                context_length=int(tok.context_length), fixed_text_length=True, vocab_size=len(tok.encoder), dtype=dtype)
