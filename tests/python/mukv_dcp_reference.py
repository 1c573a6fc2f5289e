"""MuKV's dual-signal compression transcribed from the reference implementation (IMBALDY/MuKV,
model/mukv_dualsignal_compression.py: _compute_token_importance, _compute_fft_importance,
_select_tokens_with_dedup, and the selection in _encode_granularity_chunk_with_compression), in
its own tensor layouts, for tests/test_mukv_compression.cpp to compare svqa's kept indices with.

    python mukv_dcp_reference.py DIR

DIR/cases.json is a list of cases {"n_init", "q": [files], "k": [files], "keys": file, settings};
q[l] [N, heads, dq] and k[l] [n_init + N, heads, dq] make layer l's attention probabilities the way
svqa's eager attention does (the inputs; not part of the reference). Writes DIR/expected_<i>.npy,
the kept token indices of case i.
"""

import json
import math
import pathlib
import sys

import numpy as np
import torch


def probabilities(q, k):
    """[1, heads, N, n_init + N] causal softmax(q kᵀ / √d) in float32 (the inputs, as core/nn/attention.cpp)."""
    T, S = q.shape[0], k.shape[0]
    scores = torch.matmul(q.transpose(0, 1), k.transpose(0, 1).repeat_interleave(1, 0).transpose(1, 2))
    scores = scores * (1.0 / math.sqrt(q.shape[2]))
    own = torch.arange(S - T, S).unsqueeze(1)
    visible = torch.arange(S).unsqueeze(0) <= own
    scores = scores.masked_fill(visible.logical_not(), float("-inf"))
    return torch.softmax(scores, -1, dtype=torch.float32)[None]


# --- transcribed from the reference --------------------------------------------------------------

def compute_fft_importance(target_k, method):
    new_k = target_k
    k_avg = new_k.mean(dim=(0, 1))
    if method == "diff":
        diff = torch.diff(k_avg, dim=0, prepend=k_avg[0:1])
        fft_importance = diff.norm(dim=-1)
    elif method == "fft":
        k_transposed = k_avg.T
        fft_result = torch.fft.rfft(k_transposed, dim=-1)
        magnitude = torch.abs(fft_result)
        freq_bins = magnitude.shape[-1]
        high_freq_start = max(1, freq_bins // 2)
        high_freq_mask = torch.zeros_like(magnitude)
        high_freq_mask[:, high_freq_start:] = magnitude[:, high_freq_start:]
        high_freq_component = torch.fft.irfft(high_freq_mask * torch.exp(1j * torch.angle(fft_result)),
                                              n=k_avg.shape[0], dim=-1)
        fft_importance = torch.abs(high_freq_component).mean(dim=0)
    else:
        raise ValueError(method)
    return (fft_importance - fft_importance.min()) / (fft_importance.max() - fft_importance.min() + 1e-8)


def compute_token_importance(attentions, last_k, init_len, strategy, method, fft_method, alpha):
    n_layers = len(attentions)
    if strategy == "last":
        selected_attns = [attentions[-1]]
    elif strategy == "second_last":
        selected_attns = [attentions[-2]] if n_layers >= 2 else [attentions[-1]]
    elif strategy == "last_5":
        selected_attns = list(attentions[-5:]) if n_layers >= 5 else list(attentions)
    elif strategy == "middle":
        selected_attns = [attentions[n_layers // 2]]
    if len(selected_attns) == 1:
        attn_importance = selected_attns[0].mean(dim=0).mean(dim=0).sum(dim=0)
    else:
        weights = [0.1, 0.15, 0.2, 0.25, 0.3][-len(selected_attns):]
        attn_importance = torch.zeros(attentions[0].shape[-1], dtype=attentions[0].dtype)
        for w, attn in zip(weights, selected_attns):
            attn_importance += w * attn.mean(dim=0).mean(dim=0).sum(dim=0)
    attn_importance = attn_importance[init_len:]
    if method == "attention_only":
        return attn_importance
    fft_importance = compute_fft_importance(last_k, fft_method)
    if method == "fft_only":
        return fft_importance
    beta = 1.0 - alpha
    attn_norm = (attn_importance - attn_importance.min()) / (attn_importance.max() - attn_importance.min() + 1e-8)
    return alpha * attn_norm + beta * fft_importance


def select_tokens_with_dedup(last_k, importance_scores, target_k, similarity_threshold, dedup_enabled):
    seq_len = importance_scores.shape[0]
    candidate_k = min(int(target_k * 1.2), seq_len)
    candidate_indices = importance_scores.topk(candidate_k).indices
    candidate_indices = candidate_indices.long().contiguous()
    if not dedup_enabled or candidate_k <= target_k:
        return candidate_indices[:target_k].contiguous()
    last_layer_k = last_k.mean(dim=1).squeeze(0)
    candidate_k_vectors = last_layer_k[candidate_indices]
    candidate_k_norm = candidate_k_vectors / candidate_k_vectors.norm(dim=1, keepdim=True)
    sim_matrix = torch.mm(candidate_k_norm, candidate_k_norm.t())
    # The reference loops over tensor elements; the same loop over their values as Python lists
    # (float32 values compare with the threshold alike) runs in a fraction of the time.
    sim_matrix, scores, candidate_list = sim_matrix.tolist(), importance_scores.tolist(), candidate_indices.tolist()
    keep_mask = [True] * candidate_k
    for i in range(candidate_k):
        if not keep_mask[i]:
            continue
        for j in range(i + 1, candidate_k):
            if sim_matrix[i][j] > similarity_threshold:
                idx_i = candidate_list[i]
                idx_j = candidate_list[j]
                if scores[idx_i] < scores[idx_j]:
                    keep_mask[i] = False
                    break
                else:
                    keep_mask[j] = False
    kept_indices = candidate_indices[torch.tensor(keep_mask)]
    if len(kept_indices) > target_k:
        kept_importance = importance_scores[kept_indices]
        final_positions = kept_importance.topk(target_k).indices
        final_indices = kept_indices[final_positions]
    else:
        final_indices = kept_indices
    return final_indices


def kept_indices(case, base):
    load = lambda name: torch.from_numpy(np.load(base / name))  # noqa: E731
    attentions = tuple(probabilities(load(q), load(k)) for q, k in zip(case["q"], case["k"]))
    last_k = load(case["keys"]).permute(1, 0, 2)[None]  # [N, kv_heads, d] → the reference's [1, kv_heads, N, d]
    method = {"fused": "attention_fft_weighted", "attention": "attention_only", "frequency": "fft_only"}[case["importance"]]
    scores = compute_token_importance(attentions, last_k, case["n_init"], case["attention_layer"], method,
                                      case["frequency"], case["alpha"])
    target_k = int(last_k.shape[2] * case["keep_ratio"])
    final = select_tokens_with_dedup(last_k, scores, target_k, case["dedup_threshold"], case["dedup"])
    return torch.sort(final)[0]


def main(directory):
    torch.set_num_threads(1)  # small tensors: worker threads would only spin
    base = pathlib.Path(directory)
    for i, case in enumerate(json.loads((base / "cases.json").read_text())):
        np.save(base / f"expected_{i}.npy", kept_indices(case, base).numpy().astype(np.int64))


if __name__ == "__main__":
    main(sys.argv[1])
