"""InfiniPot-V's compression of one layer's cache, transcribed in Python step by step from its
reference code (aiha-lab/InfiniPot-V, kvcache_utils.py `process_kv_cache`, method "tar_val", batch
size 1), for the cases tests/test_infinipot_v.cpp holds svqa's strategies/encoding/infinipot_v to
(tests/fixtures/infinipot_v/make_cases.py). As the reference: per kv head, on the cache's layout
[batch, heads, tokens, head_dim] after the system tokens, in the tensors' own dtype.

  pooling: layer_idx // (num_hidden_layers // 4) picks dims [2, 2, 1, -1] and sizes [7, 5, 3, 3]
  TaR:     query frames int(frames · query_ratio), kept whole; older tokens scored by minus the
           mean over query frames of the cosine (norm + 1e-9) at the same index within a frame;
           top (tar_budget − query tokens) of them, tar_budget = keep − round((1 − tar_ratio) · keep)
  VaN:     value norms per head, pooled (AvgPool over each frame's patch_size × rest grid, or 1-D
           over the sequence; stride 1, padding size // 2); TaR tokens set to max + 1; top `keep`
"""

import torch

POOLING_DIMS = [2, 2, 1, -1]
POOL_SIZES = [7, 5, 3, 3]


def pooling_for(layer_idx, num_hidden_layers):
    idx = layer_idx // (num_hidden_layers // len(POOLING_DIMS))
    return POOLING_DIMS[idx], POOL_SIZES[idx]


def pooled(val_norm_score, dims, size, token_per_frame, patch_size):
    head_num, _ = val_norm_score.shape
    frame_num = val_norm_score.shape[-1] // token_per_frame
    if dims == 1:
        return torch.nn.AvgPool1d(kernel_size=size, stride=1, padding=size // 2)(val_norm_score)
    pool = torch.nn.AvgPool2d(kernel_size=(size, size), stride=(1, 1), padding=(size // 2, size // 2))
    return pool(val_norm_score.reshape(head_num, frame_num, patch_size, -1)).reshape(head_num, -1)


def tar_val_indices(keys, values, layer_idx, num_hidden_layers, token_per_frame, compress_frame_num,
                    tar_ratio, query_ratio, adaptive_pooling, patch_size):
    """keys, values [1, heads, N, d] (the visual tokens): the kept indices per head [heads, keep], ascending."""
    num_heads = keys.shape[1]
    current_frame_num = keys.shape[2] // token_per_frame
    dims = pooling_for(layer_idx, num_hidden_layers)[0] if adaptive_pooling else -1
    size = pooling_for(layer_idx, num_hidden_layers)[1] if adaptive_pooling else 0
    keep = compress_frame_num * token_per_frame
    attn_budget = round((1 - tar_ratio) * compress_frame_num * token_per_frame)
    tar_indices = None
    if tar_ratio > 0:
        tar_budget = compress_frame_num * token_per_frame - attn_budget
        query_frame = int(current_frame_num * query_ratio)
        query_length = int(query_frame * token_per_frame)
        total_length = keys.shape[2]
        q = keys[:, :, -query_length:, :]
        q = q / (q.norm(dim=-1, keepdim=True) + 1e-9)
        k = keys[:, :, :-query_length, :]
        k = k / (k.norm(dim=-1, keepdim=True) + 1e-9)
        q = q.reshape(1, num_heads, query_frame, token_per_frame, q.shape[-1])
        k = k.reshape(1, num_heads, -1, token_per_frame, k.shape[-1])
        key_score = -(q.unsqueeze(3) * k.unsqueeze(2)).sum(dim=-1).mean(dim=2).reshape(1, num_heads, -1)
        recent = torch.arange(total_length - query_length, total_length).unsqueeze(0).expand(num_heads, -1)
        chosen = key_score.topk(tar_budget - query_length, dim=-1).indices.squeeze(0)
        tar_indices, _ = torch.cat([chosen, recent], dim=-1).sort(dim=-1)
    val_norm_score = values.norm(dim=-1)[0, :, :]
    if dims > 0:
        val_norm_score = pooled(val_norm_score, dims, size, token_per_frame, patch_size)
    if tar_indices is not None:
        heads = torch.arange(num_heads).unsqueeze(1).expand(-1, tar_indices.size(1))
        val_norm_score[heads, tar_indices] = val_norm_score.max() + 1
    kept, _ = val_norm_score.topk(keep, dim=-1).indices.sort(dim=-1)
    return kept
