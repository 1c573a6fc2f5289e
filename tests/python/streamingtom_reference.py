"""StreamingTOM's steps transcribed from the reference implementation (YIGE24/StreamingTOM @ 6c66b05:
streamingtom/modules/ctr.py `CTR`, modules/oqm.py `_quantize_tensor` / `_dequantize_tensor`,
modules/attention_processor.py `_retrieve_mode` / `_select_top_k_groups`), in their own tensor layouts,
for tests/test_streamingtom.cpp to compare svqa's results with.

    python streamingtom_reference.py DIR

Reads DIR/settings.json and the inputs svqa's test wrote:
  CTR:       frames.npy [F, 196, dim] (fed in batches of `batch` frames, as vision.py feeds them),
             importance.npy [F, 196] (the attention_scores CTR is handed); the tie-break noise comes from a
             generator seeded `seed` (the reference draws it from torch's global generator).
  OQM:       kv.npy [n, kv_heads, d], quantised in groups of `group_size` tokens at `bits` bits.
  retrieval: q_<l>.npy [T, heads, d] the question's queries and group_keys_<l>.npy [groups, kv_heads·d]
             at layer l, and a budget of `budget` tokens.
Writes DIR/ctr_static_<f>.npy, ctr_rows_<f>.npy and ctr_tokens_<f>.npy (each frame's static mask as
uint8, kept positions and tokens),
DIR/oqm_decoded.npy, and DIR/selected_<l>.npy (the groups retrieved at layer l).
"""

import json
import pathlib
import sys

import numpy as np
import torch
import torch.nn.functional as F


# --- transcribed from ctr.py (positions returned beside the features; noise from a seeded generator) ---

class CTR:
    def __init__(self, retain_tokens, similarity_threshold, k, beta, generator):
        self.retain_tokens = retain_tokens
        self.similarity_threshold = similarity_threshold
        self.k = k
        self.beta = beta
        self.generator = generator

    def _select_tokens_by_attention(self, features, attention_scores, mask, num_to_keep):
        if num_to_keep <= 0 or not mask.any():
            return (torch.zeros(0, features.shape[-1], dtype=features.dtype), torch.tensor([], dtype=torch.long))
        masked_scores = attention_scores[mask]
        k = min(num_to_keep, len(masked_scores))
        if k == 0:
            return (torch.zeros(0, features.shape[-1], dtype=features.dtype), torch.tensor([], dtype=torch.long))
        _, top_indices = torch.topk(masked_scores, k)
        positions = torch.where(mask)[0]
        selected_positions = positions[top_indices]
        return features[selected_positions], selected_positions

    def _select_and_merge_tokens_by_dpc(self, features, mask, num_clusters, k, beta):
        if num_clusters <= 0 or not mask.any():
            return (torch.zeros(0, features.shape[-1], dtype=features.dtype), torch.tensor([], dtype=torch.long))
        masked_features = features[mask]
        seq_len, embed_dim = masked_features.shape
        num_clusters = min(num_clusters, seq_len)
        centroid_indices = self._dpc_cluster(masked_features, num_clusters, k)
        positions = torch.where(mask)[0]
        selected_positions = positions[centroid_indices]
        if num_clusters == seq_len:
            return masked_features[centroid_indices], selected_positions
        dist_matrix = torch.cdist(masked_features.float(), masked_features.float()) / (embed_dim ** 0.5)
        all_indices = torch.arange(seq_len)
        non_center_mask = ~torch.isin(all_indices, centroid_indices)
        non_center_indices = all_indices[non_center_mask]
        if non_center_indices.numel() == 0:
            return masked_features[centroid_indices], selected_positions
        non_center_features = masked_features[non_center_indices]
        dist_to_centers = dist_matrix[non_center_indices][:, centroid_indices]
        assignments = torch.argmin(dist_to_centers, dim=1)
        merged_features = []
        for i, center_idx in enumerate(centroid_indices):
            cluster_mask = (assignments == i)
            if cluster_mask.any():
                cluster_mean = non_center_features[cluster_mask].mean(dim=0)
                merged = beta * masked_features[center_idx] + (1 - beta) * cluster_mean
            else:
                merged = masked_features[center_idx]
            merged_features.append(merged)
        return torch.stack(merged_features), selected_positions

    def _dpc_cluster(self, tokens, cluster_num, k):
        seq_len, embed_dim = tokens.shape
        if seq_len <= 1:
            return torch.arange(seq_len)
        k_neighbors = min(k, seq_len - 1)
        n_clusters = min(cluster_num, seq_len)
        dist_matrix = torch.cdist(tokens.float(), tokens.float()) / (embed_dim ** 0.5)
        nearest_dists, _ = torch.topk(dist_matrix, k_neighbors, dim=-1, largest=False)
        density = (-(nearest_dists ** 2).mean(dim=-1)).exp()
        density += torch.rand(density.shape, generator=self.generator) * 1e-6  # torch.rand_like(density) * 1e-6
        higher_density_mask = density[:, None] > density[None, :]
        dist_to_higher = torch.where(higher_density_mask, dist_matrix, dist_matrix.max()).min(dim=-1)[0]
        scores = density * dist_to_higher
        _, centers = torch.topk(scores, n_clusters)
        return torch.sort(centers)[0]

    def _classify_tokens(self, vision_tokens_batch, ctr_state):
        num_frames, num_tokens = vision_tokens_batch.shape[:2]
        static_masks = torch.zeros((num_frames, num_tokens), dtype=torch.bool)
        dynamic_masks = torch.zeros_like(static_masks)
        last_frame = ctr_state.get('last_frame_tokens')
        for i in range(num_frames):
            curr_frame = vision_tokens_batch[i]
            if i == 0 and last_frame is None:
                dynamic_masks[i] = True
            else:
                prev_frame = last_frame[0] if i == 0 else vision_tokens_batch[i - 1]
                curr_norm = F.normalize(curr_frame.float(), p=2, dim=-1)
                prev_norm = F.normalize(prev_frame.float(), p=2, dim=-1)
                similarity = (curr_norm * prev_norm).sum(dim=-1)
                static_masks[i] = similarity > self.similarity_threshold
                dynamic_masks[i] = ~static_masks[i]
        ctr_state['last_frame_tokens'] = vision_tokens_batch[-1:].detach()
        return static_masks, dynamic_masks

    def _compress_single_frame(self, frame_idx, vision_features_batch, attention_scores_batch, static_masks, dynamic_masks):
        frame_features = vision_features_batch[frame_idx]
        frame_scores = attention_scores_batch[frame_idx]
        static_mask = static_masks[frame_idx]
        dynamic_mask = dynamic_masks[frame_idx]
        assert frame_features.shape[0] == 196
        static_count = static_mask.sum().item()
        dynamic_count = dynamic_mask.sum().item()
        total_count = static_count + dynamic_count
        static_budget = int(self.retain_tokens * static_count / total_count)
        dynamic_budget = self.retain_tokens - static_budget
        if static_budget > static_count:
            static_budget = static_count
            dynamic_budget = self.retain_tokens - static_budget
        if dynamic_budget > dynamic_count:
            dynamic_budget = dynamic_count
            static_budget = self.retain_tokens - dynamic_budget
        collected_features, collected_positions = [], []
        if static_budget > 0:
            feats, pos = self._select_and_merge_tokens_by_dpc(frame_features, static_mask, static_budget, self.k, self.beta)
            if feats.numel() > 0:
                collected_features.append(feats)
                collected_positions.append(pos)
        if dynamic_budget > 0:
            feats, pos = self._select_tokens_by_attention(frame_features, frame_scores, dynamic_mask, dynamic_budget)
            if feats.numel() > 0:
                collected_features.append(feats)
                collected_positions.append(pos)
        all_positions = torch.cat(collected_positions)
        all_features = torch.cat(collected_features, dim=0)
        order = torch.argsort(all_positions)
        result, positions = all_features[order], all_positions[order]
        if result.shape[0] > self.retain_tokens:
            result, positions = result[:self.retain_tokens], positions[:self.retain_tokens]
        assert result.shape[0] == self.retain_tokens
        return result, positions, static_mask

    def compress_features(self, vision_features_batch, current_state, attention_scores_batch):
        ctr_state = current_state.get('ctr_state', {})
        static_masks, dynamic_masks = self._classify_tokens(vision_features_batch, ctr_state)
        out = [self._compress_single_frame(i, vision_features_batch, attention_scores_batch, static_masks, dynamic_masks)
               for i in range(vision_features_batch.shape[0])]
        return out, {'ctr_state': ctr_state}


# --- transcribed from oqm.py ----------------------------------------------------------------------

def pack_nbit(tensor, bits):
    pack_size = 8 // bits
    *batch_dims, n = tensor.shape
    tensor = tensor.reshape(*batch_dims, n // pack_size, pack_size)
    shift_amounts = torch.arange(pack_size) * bits
    return (tensor << shift_amounts).sum(dim=-1).to(torch.uint8)


def unpack_nbit(packed, bits):
    pack_size = 8 // bits
    *batch_dims, n = packed.shape
    mask = (1 << bits) - 1
    shift_amounts = torch.arange(pack_size) * bits
    unpacked = (packed.unsqueeze(-1).expand(*batch_dims, n, pack_size) >> shift_amounts) & mask
    return unpacked.reshape(*batch_dims, n * pack_size)


def quantize_tensor(tensor, group_size, bits):
    levels = 2 ** bits - 1
    B, H, S, D = tensor.shape
    num_groups = S // group_size
    tensor_reshaped = tensor.permute(0, 1, 3, 2).contiguous().reshape(B * H * D, num_groups, group_size)
    mins = tensor_reshaped.min(dim=-1)[0]
    maxs = tensor_reshaped.max(dim=-1)[0]
    scales = torch.clamp((maxs - mins) / levels, min=1e-8)
    normalized = (tensor_reshaped - mins.unsqueeze(-1)) / scales.unsqueeze(-1)
    quantized = normalized.clamp(0, levels).round_().to(torch.uint8).reshape(B, H, D, S)
    packed = pack_nbit(quantized, bits)
    scales = scales.reshape(B, H, D, num_groups).permute(0, 1, 3, 2)
    mins = mins.reshape(B, H, D, num_groups).permute(0, 1, 3, 2)
    return packed.permute(0, 1, 3, 2).contiguous(), scales, mins, S


def dequantize_tensor(data, group_size, bits):
    packed, scales, mins, S = data
    B, H, _, D = packed.shape
    num_groups = S // group_size
    packed = packed.permute(0, 1, 3, 2).contiguous()
    scales = scales.permute(0, 1, 3, 2)
    mins = mins.permute(0, 1, 3, 2)
    flat = unpack_nbit(packed, bits).reshape(B * H * D, num_groups, group_size).to(scales.dtype)
    out = flat * scales.reshape(B * H * D, num_groups).unsqueeze(-1) + mins.reshape(B * H * D, num_groups).unsqueeze(-1)
    return out.reshape(B, H, D, S).permute(0, 1, 3, 2).contiguous()


# --- transcribed from attention_processor.py --------------------------------------------------------

def query_representation(query_states, num_heads_kv):
    """_retrieve_mode: query_states [1, heads, T, d] -> the GQA group mean, then the mean over tokens."""
    _, num_heads_q, seq_q, head_dim = query_states.shape
    num_group = num_heads_q // num_heads_kv
    if num_group > 1:
        query_states_kv = query_states.reshape(1, num_heads_kv, num_group, seq_q, head_dim).mean(dim=2)
    else:
        query_states_kv = query_states
    return query_states_kv[0].mean(dim=1).reshape(-1)


def select_top_k_groups(query_repr, group_keys, budget, tokens_per_group):
    num_groups = group_keys.shape[0]
    budget_groups = (budget + tokens_per_group - 1) // tokens_per_group
    if budget_groups >= num_groups:
        return torch.arange(num_groups)
    query_repr_norm = F.normalize(query_repr.float(), p=2, dim=0)
    group_keys_norm = F.normalize(group_keys.float(), p=2, dim=1)
    similarities = torch.matmul(group_keys_norm, query_repr_norm)
    _, top_indices = torch.topk(similarities, k=min(budget_groups, num_groups), sorted=False)
    return torch.sort(top_indices)[0]


def main(folder):
    d = pathlib.Path(folder)
    s = json.loads((d / "settings.json").read_text())
    load = lambda name: torch.from_numpy(np.load(d / name))

    frames, importance = load("frames.npy"), load("importance.npy")
    ctr = CTR(s["retain_tokens"], s["similarity_threshold"], s["k"], s["beta"],
              torch.Generator().manual_seed(s["seed"]))
    state, f = {}, 0
    for start in range(0, frames.shape[0], s["batch"]):
        out, state = ctr.compress_features(frames[start:start + s["batch"]], state, importance[start:start + s["batch"]])
        for tokens, positions, static_mask in out:
            np.save(d / f"ctr_rows_{f}.npy", positions.numpy())
            np.save(d / f"ctr_tokens_{f}.npy", tokens.numpy())
            np.save(d / f"ctr_static_{f}.npy", static_mask.numpy().astype(np.uint8))
            f += 1

    kv = load("kv.npy")  # [n, kv_heads, d] -> the reference's [1, kv_heads, n, d]
    q = quantize_tensor(kv.permute(1, 0, 2).unsqueeze(0), s["group_size"], s["bits"])
    np.save(d / "oqm_decoded.npy", dequantize_tensor(q, s["group_size"], s["bits"])[0].permute(1, 0, 2).numpy())

    for layer in range(s["layers"]):
        queries = load(f"q_{layer}.npy")  # [T, heads, d] -> [1, heads, T, d]
        repr_ = query_representation(queries.permute(1, 0, 2).unsqueeze(0), s["kv_heads"])
        chosen = select_top_k_groups(repr_, load(f"group_keys_{layer}.npy"), s["budget"], s["group_size"])
        np.save(d / f"selected_{layer}.npy", chosen.numpy())


if __name__ == "__main__":
    main(sys.argv[1])
