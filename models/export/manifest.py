"""manifest.json: everything C++ needs to run an export without Python or transformers."""

FORMAT_VERSION = 1

# Prompt around a video; {video} is replaced by the visual tokens, {question} by the text.
CHAT_TEMPLATES = {
    "llava_onevision": "<|im_start|>user\n{video}\n{question}<|im_end|>\n<|im_start|>assistant\n",
    "qwen2_5_vl": ("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n"
                   "<|vision_start|>{video}<|vision_end|>{question}<|im_end|>\n<|im_start|>assistant\n"),
    # Qwen3-VL's template has no default system prompt; its processor replaces the template's
    # <|vision_start|><|video_pad|><|vision_end|> with one FRAME_PROMPT per temporal patch.
    "qwen3_vl": "<|im_start|>user\n{video}{question}<|im_end|>\n<|im_start|>assistant\n",
}

# Qwen3-VL: each temporal patch's tokens with its timestamp as text, `{seconds}` written with one
# decimal (the processor's f"<{t:.1f} seconds>", t = mean time of the patch's frames).
FRAME_PROMPTS = {"qwen3_vl": "<{seconds} seconds><|vision_start|>{frame}<|vision_end|>"}


def _eos_ids(model):
    gen = getattr(model, "generation_config", None)
    eos = getattr(gen, "eos_token_id", None) if gen is not None else None
    if eos is None:
        eos = model.config.text_config.eos_token_id
    return sorted(set(eos if isinstance(eos, list) else [eos]))


# The HF video processors' class defaults (transformers 5.23), for keys a checkpoint leaves out.
_PROCESSOR_DEFAULTS = {
    "llava_onevision": {"size": {"height": 384, "width": 384}, "image_mean": [0.48145466, 0.4578275, 0.40821073],
                        "image_std": [0.26862954, 0.26130258, 0.27577711], "rescale_factor": 1 / 255},
    "qwen2_5_vl": {"size": {"shortest_edge": 128 * 28 * 28, "longest_edge": 28 * 28 * 768},
                   "image_mean": [0.48145466, 0.4578275, 0.40821073],
                   "image_std": [0.26862954, 0.26130258, 0.27577711], "rescale_factor": 1 / 255,
                   "patch_size": 14, "temporal_patch_size": 2, "merge_size": 2},
    "qwen3_vl": {"size": {"shortest_edge": 128 * 32 * 32, "longest_edge": 32 * 32 * 768},
                 "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5], "rescale_factor": 1 / 255,
                 "patch_size": 16, "temporal_patch_size": 2, "merge_size": 2},
}


def processor_settings(architecture, saved: dict) -> dict:
    """A video processor's settings as HF resolves them: class defaults, then the saved config
    (whose legacy min_pixels / max_pixels override size, as Qwen2VLVideoProcessor does)."""
    out = {**_PROCESSOR_DEFAULTS[architecture], **{k: v for k, v in saved.items() if k in _PROCESSOR_DEFAULTS[architecture]}}
    if architecture == "qwen2_5_vl":
        size = dict(out["size"])
        if "min_pixels" in saved:
            size["shortest_edge"] = saved["min_pixels"]
        if "max_pixels" in saved:
            size["longest_edge"] = saved["max_pixels"]
        out["size"] = size
    return out


def _image_spec(settings, architecture):
    spec = {"rescale_factor": float(settings["rescale_factor"]), "mean": [float(x) for x in settings["image_mean"]],
            "std": [float(x) for x in settings["image_std"]]}
    size = settings["size"]
    if architecture == "llava_onevision":
        return {"resize": "fixed", "height": int(size["height"]), "width": int(size["width"]), **spec}
    # Qwen3-VL's smart_resize counts the pixels of all frames of a clip (t · h · w).
    return {"resize": "qwen3_smart" if architecture == "qwen3_vl" else "qwen_smart", "factor": int(settings["patch_size"] * settings["merge_size"]),
            "min_pixels": int(size["shortest_edge"]), "max_pixels": int(size["longest_edge"]),
            "patch_size": int(settings["patch_size"]), "merge_size": int(settings["merge_size"]),
            "temporal_patch_size": int(settings["temporal_patch_size"]), **spec}


def build_manifest(model, processor_settings, architecture, dtype, layer_files, source):
    cfg = model.config
    text = cfg.text_config
    head_dim = getattr(text, "head_dim", None) or text.hidden_size // text.num_attention_heads
    rope = text.rope_parameters
    manifest = {
        "format": "svqa-export",
        "format_version": FORMAT_VERSION,
        "architecture": architecture,
        "source": source,
        "dtype": dtype,
        "text": {
            "hidden_size": text.hidden_size, "num_layers": text.num_hidden_layers,
            "num_heads": text.num_attention_heads, "num_kv_heads": text.num_key_value_heads,
            "head_dim": head_dim, "vocab_size": text.vocab_size, "rope_theta": float(rope["rope_theta"]),
            "rms_norm_eps": float(text.rms_norm_eps),
        },
        "tokens": {"eos": _eos_ids(model)},
        "chat": {"video_prompt": CHAT_TEMPLATES[architecture],
                 **({"frame_prompt": FRAME_PROMPTS[architecture]} if architecture in FRAME_PROMPTS else {})},
        "image": _image_spec(processor_settings, architecture),
        "files": {"tokenizer": "tokenizer.json", "text": "text.pt", "vision": "vision.pt", "layers": layer_files},
    }
    vision = cfg.vision_config
    if architecture == "llava_onevision":
        grid = vision.image_size // vision.patch_size
        pooled = -(-grid // 2)
        manifest["vision"] = {"tokens_per_frame": pooled * pooled, "video_newline": True}
    elif architecture == "qwen3_vl":
        manifest["text"]["mrope_section"] = list(rope["mrope_section"])
        manifest["text"]["mrope_interleaved"] = True  # HF's Qwen3-VL always interleaves t/h/w slots
        vrope = getattr(vision, "rope_parameters", None) or {}
        manifest["vision"] = {
            "patch_size": vision.patch_size, "spatial_merge_size": vision.spatial_merge_size,
            "temporal_patch_size": vision.temporal_patch_size, "num_heads": vision.num_heads,
            "head_dim": vision.hidden_size // vision.num_heads, "rope_theta": float(vrope.get("rope_theta", 10000.0)),
            "num_position_embeddings": vision.num_position_embeddings,
            "deepstack_layers": len(vision.deepstack_visual_indexes),
        }
    else:
        manifest["text"]["mrope_section"] = list(rope["mrope_section"])
        vrope = getattr(vision, "rope_parameters", None) or {}
        manifest["vision"] = {
            "patch_size": vision.patch_size, "spatial_merge_size": vision.spatial_merge_size,
            "temporal_patch_size": vision.temporal_patch_size, "window_size": vision.window_size,
            "num_heads": vision.num_heads, "head_dim": vision.hidden_size // vision.num_heads,
            "rope_theta": float(vrope.get("rope_theta", 10000.0)), "tokens_per_second": vision.tokens_per_second,
        }
    return manifest
