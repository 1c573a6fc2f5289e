"""Tiny random-weight models of the real architectures, with a tokenizer trained on the spot.

They exist so tests and the demo run the real code paths (GQA, pooling, window attention,
mRoPE) in seconds on a CPU. Dimensions follow transformers' own tiny test configs, made a
little larger where a path would otherwise be trivial (≥ 4 patches per side, kv heads < heads).
"""

import random

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

QWEN2_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
COMMON_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
SPECIALS = {
    "llava_onevision": COMMON_SPECIALS + ["<image>", "<video>"],
    "qwen2_5_vl": COMMON_SPECIALS + ["<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"],
    "qwen3_vl": COMMON_SPECIALS + ["<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"],
}
_WORDS = (
    "the a what is color of object in video frame person doing where when who how many red blue green "
    "yellow moves left right up down table kitchen car road dog cat before after first last time scene "
    "answer question option best you are helpful assistant system user describe happened"
).split()


def train_tokenizer(architecture: str, vocab_size: int = 400) -> Tokenizer:
    """A Qwen2-style byte-level BPE (same normaliser, split regex and decoder as the real one)."""
    rng = random.Random(0)
    corpus = [" ".join(rng.choice(_WORDS) for _ in range(12)) + rng.choice([".", "?", "!\n"]) for _ in range(500)]
    corpus += ["0123456789 (A) (B) (C) (D) Best option: (", "视频 中的 人 🎥"]
    corpus += [f"<{t / 2:.1f} seconds>" for t in range(40)]  # Qwen3-VL's timestamp text
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_SPLIT), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIALS[architecture],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(corpus, trainer)
    return tok


def llava_onevision_config(tok: Tokenizer) -> dict:
    return dict(
        text_config=dict(
            model_type="qwen2", vocab_size=tok.get_vocab_size(), hidden_size=64, intermediate_size=96,
            num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
            max_position_embeddings=4096, rms_norm_eps=1e-6, tie_word_embeddings=True,
            rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
            bos_token_id=None, eos_token_id=tok.token_to_id("<|im_end|>"), pad_token_id=None),
        # 48 px / patch 8 → 6×6 patches → pooled to 3×3 = 9 tokens per frame (real: 27×27 → 14×14).
        vision_config=dict(
            model_type="siglip_vision_model", image_size=48, patch_size=8, hidden_size=32,
            intermediate_size=48, num_hidden_layers=2, num_attention_heads=4),
        image_token_index=tok.token_to_id("<image>"), video_token_index=tok.token_to_id("<video>"),
        vision_feature_select_strategy="full", vision_feature_layer=-1, tie_word_embeddings=True,
    )


def qwen2_5_vl_config(tok: Tokenizer) -> dict:
    return dict(
        text_config=dict(
            vocab_size=tok.get_vocab_size(), hidden_size=64, intermediate_size=96, num_hidden_layers=3,
            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096, rms_norm_eps=1e-6,
            # head_dim 16 → 8 frequency slots split t/h/w as the real [16, 24, 24] of 64.
            rope_parameters={"rope_type": "default", "rope_theta": 1000000.0, "mrope_section": [2, 3, 3]},
            tie_word_embeddings=True, bos_token_id=None, eos_token_id=tok.token_to_id("<|im_end|>"),
            pad_token_id=None),
        # Window 112 px = 4×4 merged cells: frames over 112 px per side get several windows.
        vision_config=dict(
            depth=4, hidden_size=32, intermediate_size=48, num_heads=4, out_hidden_size=64, patch_size=14,
            spatial_merge_size=2, temporal_patch_size=2, tokens_per_second=2, window_size=112,
            fullatt_block_indexes=[1, 3]),
        image_token_id=tok.token_to_id("<|image_pad|>"), video_token_id=tok.token_to_id("<|video_pad|>"),
        vision_start_token_id=tok.token_to_id("<|vision_start|>"),
        vision_end_token_id=tok.token_to_id("<|vision_end|>"), tie_word_embeddings=True,
    )


def qwen3_vl_config(tok: Tokenizer) -> dict:
    return dict(
        text_config=dict(
            vocab_size=tok.get_vocab_size(), hidden_size=64, intermediate_size=96, num_hidden_layers=4,
            # head_dim 32 ≠ hidden / heads, as Qwen3-VL-4B's 128 ≠ 2560 / 32; 16 frequency slots
            # interleaved t/h/w as the real [24, 20, 20] of 64 (t takes the tail).
            num_attention_heads=4, num_key_value_heads=2, head_dim=32, max_position_embeddings=4096,
            rms_norm_eps=1e-6, rope_parameters={"rope_type": "default", "rope_theta": 5000000.0,
                                                "mrope_section": [6, 5, 5], "mrope_interleaved": True},
            tie_word_embeddings=False, bos_token_id=None, eos_token_id=tok.token_to_id("<|im_end|>"),
            pad_token_id=None),
        # 8×8 learned position grid (the real 48×48), resampled to each frame's patch grid;
        # DeepStack from ViT blocks 0, 2, 3 into LLM layers 0, 1, 2 (the real [8, 16, 24] of 27).
        vision_config=dict(
            depth=4, hidden_size=32, intermediate_size=48, num_heads=4, out_hidden_size=64, patch_size=16,
            spatial_merge_size=2, temporal_patch_size=2, num_position_embeddings=64,
            deepstack_visual_indexes=[0, 2, 3], hidden_act="gelu_pytorch_tanh"),
        image_token_id=tok.token_to_id("<|image_pad|>"), video_token_id=tok.token_to_id("<|video_pad|>"),
        vision_start_token_id=tok.token_to_id("<|vision_start|>"),
        vision_end_token_id=tok.token_to_id("<|vision_end|>"), tie_word_embeddings=False,
    )


# Named tiny variants: an architecture and overrides of its tiny config.
PRESETS = {
    # 384 px / patch 14 → 27×27 patches pooled to 14×14 = 196 tokens per frame, the real model's
    # layout (MuKV's 49-token patches and 4-frame segments need it).
    "llava_onevision_196": ("llava_onevision", ["vision_config.image_size=384", "vision_config.patch_size=14"]),
}


def resolve(name: str, overrides: list[str]) -> tuple[str, list[str]]:
    """(architecture, overrides) of an architecture or preset name; explicit overrides come last."""
    architecture, preset = PRESETS.get(name, (name, []))
    return architecture, preset + list(overrides)


def video_processor_config(architecture: str, config: dict) -> dict:
    """Saved as hf/video_preprocessor_config.json, in the HF video processor's own keys. LLaVA-OV
    resizes frames to the vision tower's image_size, so a `--tiny-set vision_config.image_size` is
    carried here; so are Qwen's patch, temporal patch and merge sizes."""
    if architecture == "llava_onevision":
        side = config["vision_config"]["image_size"]
        return dict(video_processor_type="LlavaOnevisionVideoProcessor", size={"height": side, "width": side},
                    image_mean=[0.5, 0.5, 0.5], image_std=[0.5, 0.5, 0.5], rescale_factor=1 / 255)
    if architecture == "qwen3_vl":
        # Pixel limits count all frames (t · h · w): up to 8 frames of 160×160 px (5×5 merged cells).
        return dict(video_processor_type="Qwen3VLVideoProcessor", size={"shortest_edge": 2 * 64 * 64,
                                                                         "longest_edge": 8 * 160 * 160},
                    **_qwen_patching(config["vision_config"]), rescale_factor=1 / 255, fps=2,
                    min_frames=2, max_frames=64, image_mean=[0.5, 0.5, 0.5], image_std=[0.5, 0.5, 0.5])
    # Frames of up to 168×168 px (6×6 merged cells) keep the tiny model's sequences short.
    return dict(video_processor_type="Qwen2VLVideoProcessor", size={"shortest_edge": 56 * 56, "longest_edge": 168 * 168},
                **_qwen_patching(config["vision_config"]), rescale_factor=1 / 255,
                image_mean=[0.48145466, 0.4578275, 0.40821073], image_std=[0.26862954, 0.26130258, 0.27577711])


def _qwen_patching(vision: dict) -> dict:
    return dict(patch_size=vision["patch_size"], temporal_patch_size=vision["temporal_patch_size"],
                merge_size=vision["spatial_merge_size"])


def check_runnable(architecture: str, config: dict) -> None:
    """Refuses, in one line, a tiny config (after --tiny-set) that Hugging Face builds but that cannot
    run: widths that do not meet, heads that do not divide, frames too small for the 2× pooling."""
    text, vision = config["text_config"], config["vision_config"]

    def refuse(why):
        raise SystemExit(f"export: --tiny-set: {why}")

    heads, kv = text["num_attention_heads"], text["num_key_value_heads"]
    if heads % kv:
        refuse(f"text_config.num_key_value_heads ({kv}) must divide text_config.num_attention_heads ({heads})")
    if architecture == "llava_onevision":
        if vision["image_size"] < 2 * vision["patch_size"]:  # SigLIP floors (the real 384 px / 14 = 27 patches)
            refuse(f"vision_config.image_size ({vision['image_size']}) must hold at least 2 patches of "
                   f"vision_config.patch_size ({vision['patch_size']}) per side")
        if vision["hidden_size"] % vision["num_attention_heads"]:
            refuse(f"vision_config.num_attention_heads ({vision['num_attention_heads']}) must divide "
                   f"vision_config.hidden_size ({vision['hidden_size']})")
        return
    if vision["out_hidden_size"] != text["hidden_size"]:
        refuse(f"vision_config.out_hidden_size ({vision['out_hidden_size']}) must equal text_config.hidden_size "
               f"({text['hidden_size']}): the vision tower's tokens go straight into the text model")
    head_dim = text.get("head_dim") or text["hidden_size"] // heads
    if architecture == "qwen2_5_vl" and text["hidden_size"] % heads:
        refuse(f"text_config.num_attention_heads ({heads}) must divide text_config.hidden_size ({text['hidden_size']})")
    section = text["rope_parameters"]["mrope_section"]
    if 2 * sum(section) != head_dim:
        refuse(f"text_config.rope_parameters.mrope_section {section} must sum to half the head dim "
               f"({head_dim} / 2)")
    if architecture == "qwen3_vl" and any(i >= vision["depth"] for i in vision["deepstack_visual_indexes"]):
        refuse(f"vision_config.deepstack_visual_indexes {vision['deepstack_visual_indexes']} must be blocks "
               f"below vision_config.depth ({vision['depth']})")
    if architecture == "qwen3_vl" and len(vision["deepstack_visual_indexes"]) > text["num_hidden_layers"]:
        refuse(f"vision_config.deepstack_visual_indexes has {len(vision['deepstack_visual_indexes'])} entries, "
               f"more than text_config.num_hidden_layers ({text['num_hidden_layers']})")
    if vision["hidden_size"] % vision["num_heads"]:
        refuse(f"vision_config.num_heads ({vision['num_heads']}) must divide vision_config.hidden_size "
               f"({vision['hidden_size']})")


def apply_overrides(config: dict, overrides: list[str]) -> dict:
    """`text_config.num_hidden_layers=4` style overrides, values parsed as int/float/bool/JSON."""
    import json

    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep:
            raise SystemExit(f"--tiny-set {item!r}: expected KEY=VALUE, e.g. text_config.num_hidden_layers=4")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        node = config
        *parents, leaf = key.split(".")
        for p in parents:
            if not isinstance(node.get(p), dict):
                raise SystemExit(f"--tiny-set {item!r}: '{p}' is not a section of the tiny config")
            node = node[p]
        if leaf not in node:
            raise SystemExit(f"--tiny-set {item!r}: unknown key '{leaf}' (known: {', '.join(sorted(node))})")
        node[leaf] = value
    return config
