"""The `--model HF_DIR` export path, the one every user takes, on checkpoints with the real widths
of LLaVA-OneVision-0.5B and Qwen2.5-VL-3B (random weights, 2 text layers and 2 vision layers to fit
CI): config.json, processor configs, special-token ids and generation config written as the real
repositories ship them (../shared/reference/backbones.md, the model cards), the weights saved with
save_pretrained in bfloat16. The export must keep every width, and `svqa probe` on real-sized frames
must match the Hugging Face model (fp32): logits and greedy tokens.

Selected alone with `-m real_widths`; part of the default test command."""

import json
import resource
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest
import torch

from backbone_reference import ROOT, hf_greedy, pixel_values, prompt_ids, video_token_count

pytestmark = pytest.mark.real_widths

QUESTION = "What happens in the video? Best option: ("
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
    (directory / "tokenizer.json").write_text(json.dumps(data, ensure_ascii=False))
    (directory / "tokenizer_config.json").write_text(json.dumps({
        "added_tokens_decoder": {str(t["id"]): {k: v for k, v in t.items() if k != "id"} for t in data["added_tokens"]},
        "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>", "model_max_length": 32768,
        "tokenizer_class": "Qwen2Tokenizer"}, indent=2))


def make_checkpoint(architecture, directory):
    import transformers

    spec = CHECKPOINTS[architecture]
    directory.mkdir(parents=True)
    (directory / "config.json").write_text(json.dumps(spec["config.json"], indent=2))
    config = transformers.AutoConfig.from_pretrained(directory)
    cls = (transformers.LlavaOnevisionForConditionalGeneration if architecture == "llava_onevision"
           else transformers.Qwen2_5_VLForConditionalGeneration)
    torch.manual_seed(0)
    cls(config).to(torch.bfloat16).save_pretrained(directory)
    # As shipped: the original config.json (save_pretrained rewrote it in transformers' own layout).
    for name in ("config.json", "generation_config.json", "preprocessor_config.json", "video_preprocessor_config.json"):
        if name in spec:
            (directory / name).write_text(json.dumps(spec[name], indent=2))
    write_tokenizer(directory, spec["specials"])
    return cls


@pytest.fixture(scope="module", params=list(CHECKPOINTS))
def real(request, tmp_path_factory):
    architecture = request.param
    base = tmp_path_factory.mktemp(architecture)
    cls = make_checkpoint(architecture, base / "hf")
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "models.export", "--model", str(base / "hf"), "--out", str(base / "export")],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20  # KiB → GiB, the largest child so far
    print(f"\n{architecture}: export took {time.perf_counter() - t0:.1f} s, peak RSS {peak:.1f} GiB")
    yield architecture, base, cls
    shutil.rmtree(base)  # about 3 GB for Qwen2.5-VL-3B's widths


def test_export_keeps_the_real_widths(real):
    architecture, base, _ = real
    manifest = json.loads((base / "export" / "manifest.json").read_text())
    text = manifest["text"]
    if architecture == "llava_onevision":
        assert (text["hidden_size"], text["num_heads"], text["num_kv_heads"], text["head_dim"]) == (896, 14, 2, 64)
        image = manifest["image"]
        assert (image["resize"], image["height"], image["width"], image["mean"]) == ("fixed", 384, 384, [0.5] * 3)
        assert manifest["vision"]["tokens_per_frame"] == 196  # 27×27 patches pooled to 14×14
        assert manifest["tokens"]["eos"] == [151645]
    else:
        assert (text["hidden_size"], text["num_heads"], text["num_kv_heads"], text["head_dim"]) == (2048, 16, 2, 128)
        assert text["mrope_section"] == [16, 24, 24]
        image = manifest["image"]
        assert (image["min_pixels"], image["max_pixels"], image["factor"]) == (3136, 12845056, 28)
        assert manifest["vision"]["head_dim"] == 80 and manifest["vision"]["window_size"] == 112
        assert manifest["tokens"]["eos"] == [151643, 151645]
    assert (text["vocab_size"], text["num_layers"], text["rope_theta"]) == (151936, 2, 1000000.0)


def test_probe_on_real_sized_frames_equals_hugging_face(real, svqa_bin):
    architecture, base, cls = real
    export = base / "export"
    frames = np.random.default_rng(0).integers(0, 256, size=CHECKPOINTS[architecture]["frames"] + (3,), dtype=np.uint8)
    np.save(base / "frames.npy", frames)
    steps = 4
    r = subprocess.run([svqa_bin, "probe", "--export", export, "--frames", base / "frames.npy", "--prompt", QUESTION,
                        "--fps", "2", "--logits", base / "logits.npy", "--generate", str(steps)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["visual_tokens"] == (2 * 196 if architecture == "llava_onevision" else 196)

    from tokenizers import Tokenizer

    manifest = json.loads((export / "manifest.json").read_text())
    model = cls.from_pretrained(base / "hf", dtype=torch.float32).eval()
    tok = Tokenizer.from_file(str(base / "hf" / "tokenizer.json"))
    inputs = pixel_values(manifest, frames)
    ids = prompt_ids(manifest, tok, QUESTION, video_token_count(manifest, inputs, len(frames)))
    extra = {"logits_to_keep": 1}
    if architecture == "qwen2_5_vl":
        extra["second_per_grid_ts"] = torch.tensor([2 / 2.0])
    hf_logits, hf_ids = hf_greedy(model, manifest, ids, inputs, steps, extra)
    logits = np.load(base / "logits.npy")
    assert out["prompt_tokens"] == len(ids)
    print(f"\n{architecture}: {len(ids)} prompt tokens, max |Δ logits| = {np.abs(logits - hf_logits).max():.2g} "
          f"(logits up to {np.abs(hf_logits).max():.2g}), probe {out['seconds']:.1f} s")
    assert np.abs(logits - hf_logits).max() <= 1e-3 * max(1.0, np.abs(hf_logits).max())
    assert out["generated_ids"] == hf_ids
