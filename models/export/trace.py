"""Traces the wrapper modules and checks each trace against the Hugging Face forward it replaces."""

import torch
import torch.nn.functional as F

from .wrappers import (DecoderLayerPieces, LlavaOnevisionVision, Qwen2_5_VLVision, Qwen3DecoderLayerPieces,
                       Qwen3VLVision, TextPieces)

# Export-time self-check tolerance, relative to the output's largest magnitude (at least 1): on a
# Qwen2.5-VL-3B-shaped random checkpoint the 32-block bfloat16 vision tower's trace differs from the
# eager forward by 0.18 with outputs up to 6.2 (bfloat16 rounding over 32 blocks), which an absolute
# 0.1 refused. The C++ parity tests are the real proof.
_CHECK_RTOL = {torch.float32: 1e-4, torch.float16: 5e-2, torch.bfloat16: 1e-1}


def _text_model(model):
    return model.model.language_model


def trace_text(model, architecture, dtype):
    hidden = model.config.text_config.hidden_size
    pieces = TextPieces(_text_model(model), model.lm_head).eval()
    return torch.jit.trace_module(pieces, {"forward": (torch.randn(1, 3, hidden, dtype=dtype),),
                                           "embed": (torch.tensor([[1, 2, 3]]),)})


def trace_layers(model, architecture, dtype):
    cfg = model.config.text_config
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    h = torch.randn(1, 3, cfg.hidden_size, dtype=dtype)
    attn = torch.randn(1, 3, cfg.num_attention_heads * head_dim, dtype=dtype)
    pieces = Qwen3DecoderLayerPieces if architecture == "qwen3_vl" else DecoderLayerPieces
    for layer in _text_model(model).layers:
        yield torch.jit.trace_module(pieces(layer).eval(), {"qkv": (h,), "forward": (h, attn)})


def _check(name, got, want, dtype):
    err = (got.float() - want.float()).abs().max().item()
    scale = max(1.0, want.float().abs().max().item())
    if err > _CHECK_RTOL[dtype] * scale:
        raise SystemExit(f"export: traced {name} differs from the Hugging Face forward by {err:.3g} "
                         f"(outputs up to {scale:.3g})")


def llava_layer_by_layer(traced, pixels, layers, heads):
    """The traced tower's layer-by-layer methods composed as models/backbones/vision_layers.cpp composes
    them: embed, then per layer norm1, q/k/v, attention (SDPA), out + residual, mlp + residual; head."""
    h = traced.embed(pixels)
    for i in range(layers):
        x = getattr(traced, f"layer{i}_norm1")(h)
        q, k, v = (getattr(traced, f"layer{i}_{p}")(x).unflatten(-1, (heads, -1)).transpose(1, 2) for p in "qkv")
        h = h + getattr(traced, f"layer{i}_out")(F.scaled_dot_product_attention(q, k, v).transpose(1, 2).flatten(2))
        h = h + getattr(traced, f"layer{i}_mlp")(h)
    return traced.head(h)


def _trace_llava_vision(model, dtype):
    vcfg = model.config.vision_config
    wrapper = LlavaOnevisionVision(model.model).eval()
    example = torch.randn(2, 3, vcfg.image_size, vcfg.image_size, dtype=dtype)
    hidden = wrapper.embed(example).detach()
    # check_trace off: it retraces every method once per method (the whole tower ~6 × layers times); the
    # _check calls below compare both paths with HF's forward on another frame count instead.
    traced = torch.jit.trace_module(wrapper, {"forward": (example,), "embed": (example,), "head": (hidden,),
                                              **{name: (hidden,) for name in wrapper.layer_pieces}},
                                    check_trace=False)
    check = torch.randn(3, 3, vcfg.image_size, vcfg.image_size, dtype=dtype)
    want = model.model.get_video_features(pixel_values_videos=check[None]).pooler_output[0, :-1]
    _check("vision", traced(check).reshape(-1, want.shape[-1]), want, dtype)
    layered = llava_layer_by_layer(traced, check, wrapper.layerwise_layers, vcfg.num_attention_heads)
    _check("vision layer by layer", layered.reshape(-1, want.shape[-1]), want, dtype)
    return traced


def qwen_vision_inputs(visual, grid_thw):
    """The tensors our Qwen2.5-VL vision wrapper takes besides patches, computed with HF's helpers
    (C++ computes the same in models/backbones/qwen_vision_inputs.cpp)."""
    from transformers.vision_utils import get_vision_cu_seqlens, get_vision_position_ids, get_vision_window_index

    merge, unit = visual.spatial_merge_size, visual.spatial_merge_size ** 2
    positions = get_vision_position_ids(grid_thw, merge)
    window_index, cu_window = get_vision_window_index(grid_thw, merge, visual.window_size, visual.patch_size)
    cu_full = get_vision_cu_seqlens(grid_thw)
    n = int(cu_full[-1])
    cos, sin = visual.rotary_pos_emb(torch.empty(0), positions)

    def reorder(t):
        return t.reshape(n // unit, unit, -1)[window_index].reshape(n, -1)

    def block_mask(cu):
        seg = torch.repeat_interleave(torch.arange(len(cu) - 1), (cu[1:] - cu[:-1]).long())
        return torch.zeros(n, n).masked_fill(seg[:, None] != seg[None, :], float("-inf"))

    return (reorder(cos), reorder(sin), window_index, torch.argsort(window_index),
            block_mask(cu_full), block_mask(cu_window))


def _trace_qwen_vision(model, dtype):
    visual = model.model.visual
    vcfg = model.config.vision_config
    row = 3 * vcfg.temporal_patch_size * vcfg.patch_size ** 2

    def run(traced_or_wrapper, grid):
        n = int(grid.prod())
        patches = torch.randn(n, row, dtype=dtype)
        extra = qwen_vision_inputs(visual, grid)
        extra = extra[:4] + tuple(t.to(dtype) for t in extra[4:])  # cos/sin stay float32, as in C++
        return patches, extra

    wrapper = Qwen2_5_VLVision(visual).eval()
    patches, extra = run(wrapper, torch.tensor([[1, 10, 12]]))
    traced = torch.jit.trace(wrapper, (patches,) + extra)
    for grid in (torch.tensor([[1, 10, 12]]), torch.tensor([[1, 6, 4]])):  # the second: a shape not traced
        patches, extra = run(traced, grid)
        _check(f"vision (grid {grid.tolist()[0]})", traced(patches, *extra), visual(patches, grid).pooler_output,
               dtype)
    return traced


def qwen3_vision_inputs(visual, grid_thw):
    """The tensors our Qwen3-VL vision wrapper takes besides patches, computed with HF's helpers
    (C++ computes the same in models/backbones/qwen3_vision_inputs.cpp)."""
    from transformers.vision_utils import get_vision_interpolation_indices_and_weights, get_vision_position_ids

    positions = get_vision_position_ids(grid_thw, visual.spatial_merge_size)
    cos, sin = visual.rotary_pos_emb(torch.empty(0), positions)
    index, weight = get_vision_interpolation_indices_and_weights(
        grid_thw, num_grid_per_side=visual.num_grid_per_side, mode=visual.interpolation_mode,
        align_corners=visual.interpolation_align_corners, spatial_merge_size=visual.spatial_merge_size)
    return cos, sin, index, weight


def _trace_qwen3_vision(model, dtype):
    visual = model.model.visual
    vcfg = model.config.vision_config
    row = 3 * vcfg.temporal_patch_size * vcfg.patch_size ** 2

    def example(grid):
        return (torch.randn(int(grid.prod()), row, dtype=dtype),) + qwen3_vision_inputs(visual, grid)

    wrapper = Qwen3VLVision(visual).eval()
    traced = torch.jit.trace(wrapper, example(torch.tensor([[1, 10, 12]])))
    for grid in (torch.tensor([[1, 10, 12]]), torch.tensor([[1, 6, 4]])):  # the second: a shape not traced
        args = example(grid)
        tokens, deepstack = traced(*args)
        want = visual(args[0], grid)
        _check(f"vision (grid {grid.tolist()[0]})", tokens, want.pooler_output, dtype)
        _check(f"vision deepstack (grid {grid.tolist()[0]})", deepstack, torch.stack(want.deepstack_features), dtype)
    return traced


def trace_vision(model, architecture, dtype):
    if architecture == "llava_onevision":
        return _trace_llava_vision(model, dtype)
    if architecture == "qwen3_vl":
        return _trace_qwen3_vision(model, dtype)
    return _trace_qwen_vision(model, dtype)
