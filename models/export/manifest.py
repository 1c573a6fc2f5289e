"""manifest.json: everything C++ needs to run an export without Python or transformers."""

from . import processor_config

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
    if eos is None:  # generate() takes the model config's when there is no generation config
        eos = model.config.text_config.eos_token_id
    if eos is None or eos == []:
        raise SystemExit("export: no eos_token_id in generation_config.json or text_config: answers would never end")
    return sorted(set(eos if isinstance(eos, list) else [eos]))


def _required(mapping, key, where):
    if key not in mapping:
        raise SystemExit(f"export: config.json: no {where}.{key}; its value is not guessed")
    return mapping[key]


def processor_settings(architecture, saved: dict, where: str) -> dict:
    """The video processor's settings from what the checkpoint saved (`where` names it): mean, std and
    sizes must be there (legacy min_pixels / max_pixels override size, as Qwen2VLVideoProcessor does);
    only CLASS_CONSTANTS may come from the class default, announced (processor_config.py)."""
    for flag in ("do_rescale", "do_normalize"):
        if saved.get(flag) is False:
            raise SystemExit(f"export: {where}: \"{flag}\": false; svqa always rescales and normalises")
    if architecture == "llava_onevision":
        out = processor_config.settings(saved, where, ("size", "image_mean", "image_std"), ("rescale_factor",))
        if not isinstance(out["size"], dict) or not {"height", "width"} <= out["size"].keys():
            raise SystemExit(f"export: {where}: \"size\" {out['size']!r} has no height and width")
        return out
    out = processor_config.settings(saved, where, ("image_mean", "image_std", "patch_size", "temporal_patch_size",
                                                   "merge_size"), ("rescale_factor",))
    size = saved.get("size") if isinstance(saved.get("size"), dict) else {}
    edges = {"shortest_edge": saved.get("min_pixels", size.get("shortest_edge")),
             "longest_edge": saved.get("max_pixels", size.get("longest_edge"))}
    for edge, legacy in (("shortest_edge", "min_pixels"), ("longest_edge", "max_pixels")):
        if edges[edge] is None:
            raise SystemExit(f"export: {where}: neither \"size\": {{\"{edge}\"}} nor \"{legacy}\"; "
                             "its value is not guessed (add it from the model's card)")
    out["size"] = edges
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
        # The tower layer by layer (vision.pt's layer{i}_* methods, wrappers.py): the layers the features
        # read (hidden_states[vision_feature_layer] is the output of this many) and their heads.
        manifest["vision"] = {"tokens_per_frame": pooled * pooled, "video_newline": True,
                              "layers": cfg.vision_feature_layer % (vision.num_hidden_layers + 1),
                              "num_heads": vision.num_attention_heads}
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
            "rope_theta": float(_required(vrope, "rope_theta", "vision_config.rope_parameters")),
            "tokens_per_second": vision.tokens_per_second,
        }
    return manifest
