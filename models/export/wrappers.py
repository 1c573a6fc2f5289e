"""Thin modules around Hugging Face submodules, traced one by one.

Only weighted parts are exported; attention, RoPE/mRoPE and the KV cache live in C++ so that
strategies can change them. Every input is a plain tensor and every shape comes from
`size()`/`view(-1)`, so one trace serves any sequence length.
"""

import math
import types

import torch
import torch.nn.functional as F
from torch import nn


class TextPieces(nn.Module):
    """`embed(ids [B,T]) → [B,T,H]`; `forward(h [B,T,H]) → logits [B,T,V]` (final norm + lm_head)."""

    def __init__(self, language_model, lm_head):
        super().__init__()
        self.embed_tokens = language_model.embed_tokens
        self.norm = language_model.norm
        self.lm_head = lm_head

    def embed(self, ids):
        return self.embed_tokens(ids)

    def forward(self, h):
        return self.lm_head(self.norm(h))


class DecoderLayerPieces(nn.Module):
    """A Qwen2 decoder layer cut around attention.

    `qkv(h)`: input RMSNorm + q/k/v projections, not rotated, [B,T,heads*d] / [B,T,kv*d].
    `forward(h, attn [B,T,heads*d])`: o_proj + residual + post-attention RMSNorm + MLP + residual.
    """

    def __init__(self, layer):
        super().__init__()
        self.input_layernorm = layer.input_layernorm
        self.q_proj = layer.self_attn.q_proj
        self.k_proj = layer.self_attn.k_proj
        self.v_proj = layer.self_attn.v_proj
        self.o_proj = layer.self_attn.o_proj
        self.post_attention_layernorm = layer.post_attention_layernorm
        self.mlp = layer.mlp

    def qkv(self, h):
        x = self.input_layernorm(h)
        return self.q_proj(x), self.k_proj(x), self.v_proj(x)

    def forward(self, h, attn):
        h = h + self.o_proj(attn)
        return h + self.mlp(self.post_attention_layernorm(h))


class LlavaOnevisionVision(nn.Module):
    """pixels [F,3,S,S] → visual tokens [F, P, H]: SigLIP → projector → 2× bilinear pooling.

    `image_newline` [H] is kept as a buffer: HF appends it once after a video.

    The same tower layer by layer, for methods that recompute only some of a frame's tokens in each
    layer (STC-Cacher), as methods traced beside `forward` (trace.py): `embed(pixels) → h [F,N,D]`;
    per layer i, the row-wise pieces around attention, `layer{i}_norm1(h)`, `layer{i}_q(x)`,
    `layer{i}_k(x)`, `layer{i}_v(x)`, `layer{i}_out(a)` (out_proj) and `layer{i}_mlp(h)` (layer_norm2
    + MLP); `head(h)`: the tokens from the output of the last layer the features read. Attention
    (softmax over the frame's patches, scale d^-½, no mask) is the caller's
    (models/backbones/vision_layers.h)."""

    def __init__(self, model):
        super().__init__()
        cfg = model.config
        if not isinstance(cfg.vision_feature_layer, int):
            raise SystemExit("export: a list vision_feature_layer is not supported (LLaVA-OV checkpoints use -1)")
        self.tower = model.vision_tower
        self.projector = model.multi_modal_projector
        self.feature_layer = cfg.vision_feature_layer
        self.drop_cls = cfg.vision_feature_select_strategy == "default"
        self.grid = cfg.vision_config.image_size // cfg.vision_config.patch_size
        self.pooled = math.ceil(self.grid / 2)
        self.register_buffer("image_newline", model.image_newline.detach().clone())
        siglip = getattr(self.tower, "vision_model", self.tower)  # older transformers wrap the transformer
        # hidden_states[feature_layer] is the output of this many layers (hidden_states[0]: the embeddings)
        self.layerwise_layers = self.feature_layer % (len(siglip.encoder.layers) + 1)
        self.layer_pieces = {}
        for i, layer in enumerate(siglip.encoder.layers[:self.layerwise_layers]):
            attn = layer.self_attn
            self.layer_pieces.update({f"layer{i}_norm1": layer.layer_norm1, f"layer{i}_q": attn.q_proj,
                                      f"layer{i}_k": attn.k_proj, f"layer{i}_v": attn.v_proj,
                                      f"layer{i}_out": attn.out_proj,
                                      f"layer{i}_mlp": nn.Sequential(layer.layer_norm2, layer.mlp)})
        for name, piece in self.layer_pieces.items():  # methods of this module, traced with its weights
            object.__setattr__(self, name, types.MethodType(lambda module, x, piece=piece: piece(x), self))

    def _tokens(self, hidden):
        if self.drop_cls:
            hidden = hidden[:, 1:]
        x = self.projector(hidden)
        x = x.view(x.shape[0], self.grid, self.grid, -1).permute(0, 3, 1, 2)
        x = F.interpolate(x, size=[self.pooled, self.pooled], mode="bilinear")
        return x.permute(0, 2, 3, 1).reshape(x.shape[0], self.pooled * self.pooled, -1)

    def forward(self, pixels):
        return self._tokens(self.tower(pixels, output_hidden_states=True).hidden_states[self.feature_layer])

    def embed(self, pixels):
        return getattr(self.tower, "vision_model", self.tower).embeddings(pixels)

    def head(self, hidden):
        return self._tokens(hidden)


def _attention_over_patches(q, k, v, mask=None):
    """q, k, v [N, heads, d] → [N, heads, d]. Given as a batch of one: SDPA takes its fused CPU kernel only
    for 4-D inputs, and 3-D ones went to the math form (a [heads, N, N] score matrix per block; 19 % of
    Qwen2.5-VL-3B's vision time, docs/performance.md)."""
    out = F.scaled_dot_product_attention(q.transpose(0, 1)[None], k.transpose(0, 1)[None], v.transpose(0, 1)[None],
                                         attn_mask=mask)
    return out[0].transpose(0, 1)


def _rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Qwen2_5_VLVision(nn.Module):
    """Qwen2.5-VL's ViT + merger, with the data-dependent parts passed in from C++.

    forward(patches [N, 3*tp*p*p], cos [N,d], sin [N,d], window_index [N/m²], reverse_index [N/m²],
            full_mask [N,N], window_mask [N,N]) → tokens [N/m², H]
    cos/sin and both additive masks are in window order (as HF's blocks see them); the output is
    back in the processor's (row-major merged-cell) order.
    """

    def __init__(self, visual):
        super().__init__()
        self.patch_embed = visual.patch_embed
        self.blocks = visual.blocks
        self.merger = visual.merger
        self.full_blocks = set(visual.fullatt_block_indexes)
        self.unit = visual.spatial_merge_size ** 2
        self.num_heads = visual.blocks[0].attn.num_heads

    def _attention(self, attn, x, cos, sin, mask):
        n = x.shape[0]
        q, k, v = attn.qkv(x).reshape(n, 3, self.num_heads, -1).permute(1, 0, 2, 3).unbind(0)
        c, s = cos.unsqueeze(-2).float(), sin.unsqueeze(-2).float()
        q = (q.float() * c + _rotate_half(q.float()) * s).to(x.dtype)
        k = (k.float() * c + _rotate_half(k.float()) * s).to(x.dtype)
        out = _attention_over_patches(q, k, v, mask.to(x.dtype))
        return attn.proj(out.reshape(n, -1))

    def forward(self, patches, cos, sin, window_index, reverse_index, full_mask, window_mask):
        h = self.patch_embed(patches)
        n = h.shape[0]
        h = h.reshape(n // self.unit, self.unit, -1)[window_index].reshape(n, -1)
        for i, blk in enumerate(self.blocks):
            mask = full_mask if i in self.full_blocks else window_mask
            h = h + self._attention(blk.attn, blk.norm1(h), cos, sin, mask)
            h = h + blk.mlp(blk.norm2(h))
        return self.merger(h)[reverse_index]


class Qwen3DecoderLayerPieces(DecoderLayerPieces):
    """A Qwen3 decoder layer cut around attention: as DecoderLayerPieces, with the per-head RMSNorm
    of queries and keys (QK-norm) inside `qkv`, so C++ rotates already-normalised q and k (HF
    normalises before RoPE)."""

    def __init__(self, layer):
        super().__init__(layer)
        self.q_norm = layer.self_attn.q_norm
        self.k_norm = layer.self_attn.k_norm
        self.head_dim = layer.self_attn.head_dim

    def qkv(self, h):
        x = self.input_layernorm(h)
        q = self.q_norm(self.q_proj(x).view(x.shape[0], x.shape[1], -1, self.head_dim)).flatten(2)
        k = self.k_norm(self.k_proj(x).view(x.shape[0], x.shape[1], -1, self.head_dim)).flatten(2)
        return q, k, self.v_proj(x)


class Qwen3VLVision(nn.Module):
    """Qwen3-VL's ViT + merger + DeepStack mergers for one temporal patch, with the grid-dependent
    parts passed in from C++ (models/backbones/qwen3_vision_inputs.cpp).

    forward(patches [N, 3*tp*p*p], cos [N,d], sin [N,d], interp_index [N,4], interp_weight [N,4])
      → (tokens [N/m², H], deepstack [K, N/m², H])
    Patches in the processor's merge-block order; cos/sin float32; interp_* resample the learned
    square position grid to this frame's grid (bilinear, align_corners, as HF). Full attention over
    the temporal patch (HF's cu_seqlens are per temporal patch).
    """

    def __init__(self, visual):
        super().__init__()
        self.patch_embed = visual.patch_embed
        self.pos_embed = visual.pos_embed
        self.blocks = visual.blocks
        self.merger = visual.merger
        self.deepstack_mergers = visual.deepstack_merger_list
        self.deepstack_indexes = list(visual.deepstack_visual_indexes)
        self.num_heads = visual.blocks[0].attn.num_heads

    def _attention(self, attn, x, cos, sin):
        n = x.shape[0]
        q, k, v = attn.qkv(x).reshape(n, 3, self.num_heads, -1).permute(1, 0, 2, 3).unbind(0)
        c, s = cos.unsqueeze(-2).float(), sin.unsqueeze(-2).float()
        q = (q.float() * c + _rotate_half(q.float()) * s).to(x.dtype)
        k = (k.float() * c + _rotate_half(k.float()) * s).to(x.dtype)
        out = _attention_over_patches(q, k, v)
        return attn.proj(out.reshape(n, -1))

    def forward(self, patches, cos, sin, interp_index, interp_weight):
        h = self.patch_embed(patches)
        pos = (self.pos_embed(interp_index) * interp_weight[:, :, None]).sum(1)
        h = h + pos.to(h.dtype)
        features = []
        for i, blk in enumerate(self.blocks):
            h = h + self._attention(blk.attn, blk.norm1(h), cos, sin)
            h = h + blk.mlp(blk.norm2(h))
            if i in self.deepstack_indexes:
                features.append(self.deepstack_mergers[self.deepstack_indexes.index(i)](h))
        return self.merger(h), torch.stack(features)
