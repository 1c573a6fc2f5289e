"""STC's steps transcribed from its released code (lern-to-write/STC, package stc/ and its ReKV
integration models/rekv/), over a Hugging Face LLaVA-OneVision, on ReKV's transcription
(rekv_reference.py), for test_stc.py to compare svqa's `stc` preset with:
  STC-Cacher: stc/cacher/reference_forward.py `_should_refresh_reference`, `_full_forward_and_cache`,
    `_selective_key_forward` (the SigLIP layers' forward), stc/core/selectors.py
    `select_dynamic_token_indices` (cosine);
  STC-Pruner: stc/pruner/pruner.py `STCPruner.compress` with scoring.py `ScoreCalculator` (the
    `gaussian` score the ReKV integration fixes) and the flat index mapping of `llava_ov` (its 196
    tokens a frame are the tiny export's tokens_per_frame here);
  the driver: models/rekv/model/abstract_rekv.py `encode_video` (one frame a chunk, chunk_idx from 0 at
    every call) and llava_onevision_rekv.py `_get_video_features` (tower, projector, pooling, pruner).
"""

import torch
import torch.nn.functional as F

from rekv_reference import ReKV


def _heads(states, num_heads):  # reference_forward.py _reshape_heads
    b, n, d = states.shape
    return states.view(b, n, num_heads, d // num_heads).transpose(1, 2)


def _attention(attn, q, k, v):  # stc_sdpa_attention: SDPA (non-causal, no mask), then out_proj
    b, n = q.shape[0], q.shape[2]
    out = F.scaled_dot_product_attention(q, k, v, is_causal=False)
    return attn.out_proj(out.transpose(1, 2).contiguous().view(b, n, -1))


class Cacher:
    """STC-Cacher over HF SigLIP encoder layers; `refs[i]` is layer i's reference (key, value, attention
    output, MLP output) of the last refresh frame."""

    def __init__(self, layers, num_heads, update_ratio, cache_interval):
        self.layers, self.num_heads = layers, num_heads
        self.update_ratio, self.cache_interval = update_ratio, cache_interval
        self.refs = {}

    def full(self, i, layer, h):
        attn = layer.self_attn
        x = layer.layer_norm1(h)
        q, k, v = attn.q_proj(x), attn.k_proj(x), attn.v_proj(x)
        a = _attention(attn, _heads(q, self.num_heads), _heads(k, self.num_heads), _heads(v, self.num_heads))
        h = h + a
        m = layer.mlp(layer.layer_norm2(h))
        self.refs[i] = (k[-1].clone(), v[-1].clone(), a[-1].clone(), m[-1].clone())
        return h + m

    def selective(self, i, layer, h):
        ref_k, ref_v, ref_a, ref_m = self.refs[i]
        attn = layer.self_attn
        x = layer.layer_norm1(h)
        b, n, d = x.shape
        k_full = attn.k_proj(x)
        scores = F.cosine_similarity(k_full, ref_k.unsqueeze(0), dim=-1)
        keep = max(1, min(int(n * self.update_ratio), n))
        idx = torch.topk(scores, k=keep, dim=1, largest=False).indices
        gather = idx.unsqueeze(-1).expand(-1, -1, d)
        chosen = x.gather(1, gather)
        q_sel = _heads(attn.q_proj(chosen), self.num_heads)
        v_sel = _heads(attn.v_proj(chosen), self.num_heads)
        values = ref_v.unsqueeze(0).expand(b, n, d).clone().view(b, n, self.num_heads, -1).transpose(1, 2)
        values.scatter_(2, idx.unsqueeze(1).unsqueeze(-1).expand(b, self.num_heads, keep, d // self.num_heads), v_sel)
        a_sel = _attention(attn, q_sel, _heads(k_full, self.num_heads), values)
        a = ref_a.unsqueeze(0).expand(b, n, d).clone()
        a.scatter_(1, gather, a_sel)
        h = h + a
        m = ref_m.unsqueeze(0).expand(b, n, d).clone()
        m.scatter_(1, gather, layer.mlp(layer.layer_norm2(h).gather(1, gather)))
        return h + m, idx[0].sort().values.tolist()

    def tower(self, siglip, pixels, chunk_idx):
        """hidden_states of the patched tower (embeddings, then every layer's output) and the tokens each
        layer recomputed (None: the frame refreshed)."""
        h = siglip.embeddings(pixels)
        states, recomputed = [h], []
        for i, layer in enumerate(self.layers):
            if i not in self.refs or chunk_idx % self.cache_interval == 0:  # _should_refresh_reference
                h = self.full(i, layer, h)
            else:
                h, idx = self.selective(i, layer, h)
                recomputed.append(idx)
            states.append(h)
        return states, recomputed


def gaussian_similarity(features, target):  # scoring.py ScoreCalculator.gaussian_similarity
    l2_dist_sq = torch.sum((features - target) ** 2, dim=-1)
    return sum(torch.exp(-l2_dist_sq / (2 * alpha)) for alpha in (2 ** k for k in range(-3, 2)))


class Pruner:
    """STCPruner.compress with the gaussian score, one frame a call, tokens_per_frame of the export."""

    def __init__(self, token_per_frame, channel_keep_ratio, source_tokens_per_frame):
        self.budget, self.ratio, self.per_frame = token_per_frame, channel_keep_ratio, source_tokens_per_frame
        self.past_memory_mean_token = []

    def kept(self, flattened):
        channel_var = flattened.var(dim=0, unbiased=False)
        kept_channels = max(1, int(channel_var.shape[0] * self.ratio))
        selected = flattened[:, torch.topk(channel_var, k=kept_channels, largest=False).indices]
        frames = selected.shape[0] // self.per_frame
        reshaped = selected.view(frames, self.per_frame, -1)
        self.past_memory_mean_token.append(reshaped.mean(dim=(0, 1), keepdim=True))
        memory_mean = torch.mean(torch.cat(self.past_memory_mean_token, dim=0), dim=0)
        norm = F.normalize(reshaped, dim=-1)
        frame_scores = gaussian_similarity(norm, norm.mean(dim=1, keepdim=True))
        memory_scores = gaussian_similarity(norm, F.normalize(memory_mean, dim=-1).view(1, 1, -1))
        scores = memory_scores + frame_scores
        budget = max(1, min(int(self.budget), self.per_frame))
        kept = [torch.topk(scores[f], k=budget, largest=False).indices.sort().values for f in range(frames)]
        return torch.cat([k + f * self.per_frame for f, k in enumerate(kept)])  # IndexMapper "flat"


class StcReKV(ReKV):
    """LlavaOneVision_ReKV with STC: `records` holds, per question, the frames encoded since the
    previous one ({frame: {refresh, recomputed, kept}})."""

    def __init__(self, model, tokenizer, manifest, n_local, topk, update_ratio, cache_interval, token_per_frame,
                 channel_keep_ratio=0.5):
        super().__init__(model, tokenizer, manifest, n_local, topk, sample_fps=1.0, encode_chunk_size=1)
        siglip = model.model.vision_tower
        siglip = getattr(siglip, "vision_model", siglip)
        layers = siglip.encoder.layers
        self.siglip = siglip
        self.cacher = Cacher(layers, model.config.vision_config.num_attention_heads, update_ratio, cache_interval)
        self.pruner = Pruner(token_per_frame, channel_keep_ratio, self.n_frame_tokens)
        self.n_frame_tokens = min(token_per_frame, self.n_frame_tokens)  # load_model: block_size = STC_TOKEN_PER_FRAME
        self.frame, self.chunk_idx, self.record, self.records = 0, 0, {}, []

    def video_features(self, pixel_values_videos):
        m = self.model.model
        b, frames, c, hh, ww = pixel_values_videos.shape
        states, recomputed = self.cacher.tower(self.siglip, pixel_values_videos.view(b * frames, c, hh, ww), self.chunk_idx)
        feature = states[self.model.config.vision_feature_layer]
        if self.model.config.vision_feature_select_strategy == "default":
            feature = feature[:, 1:]
        feature = m.apply_pooling(m.multi_modal_projector(feature))
        flat = feature.reshape(-1, feature.size(-1))
        kept = self.pruner.kept(flat)
        self.record[str(self.frame)] = {"refresh": not recomputed, "recomputed": recomputed, "kept": kept.tolist()}
        return flat[kept].reshape(b, -1, flat.size(-1))

    def encode_video(self, pixel_values_videos):
        for chunk_idx in range(pixel_values_videos.size(1)):  # encode_chunk_size 1; reset_default_cache(chunk_idx)
            self.chunk_idx = chunk_idx
            self.encode_video_chunk(pixel_values_videos[:, chunk_idx:chunk_idx + 1])
            self.frame += 1

    def question_answering(self, input_text, max_new_tokens):
        self.records.append(self.record)
        self.record = {}
        return super().question_answering(input_text, max_new_tokens)
