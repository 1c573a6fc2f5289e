"""HERMES's streaming path transcribed in Python over a Hugging Face LLaVA-OneVision model (reference
code haowei-freesky/HERMES @ b505d95, inference/llavaov_online_official.py), step by step, for
tests/python/test_hermes.py. What each piece transcribes:

  encode_init_prompt           the init prompt, per-layer position ids 0..n−1
  encode_video_chunk           a chunk's frames at each layer's next positions (_get_next_start_pos_per_layer,
                               _build_position_ids, the per-layer position-id hooks), cache appended
  pseudo_forward               the local, global and mixed ("local; global") pseudo queries, each run over the
                               cache with output_attentions (the eager path; use_cache=False: the cache is kept)
  prune_kv_cache_by_attention  tiers, recency, min-max normalisation, cross-layer smoothing, top-k per layer
  _shrink_positions_and_rerotate_keys  kept tokens, dense re-indexing past max_position_embeddings − 1024
                               with keys re-rotated, long-term layers' summary token (keys re-rotated to its
                               position, then averaged)
  question_answering           the prompt at each layer's next positions, greedy decoding, cache cut back

Choices of svqa where the reference is silent, mirrored here (docs/strategies.md, "HERMES"): a
compaction check after every frame (predict_and_compress's caller is not released), the pseudo
queries without conversation history, greedy decoding without the repetition penalty.
Batch size 1; the Qwen2 decoder layers are run from the HF model's own modules (ReKV.run_layers).
"""

import math

import torch

from rekv_reference import ReKV, Rope

LOCAL_QUERY = ("Describe the current scene in detail, focusing on specific objects, fine-grained actions, and "
               "spatial relationships.")
GLOBAL_QUERY = ("Summarize the video narrative, identifying main characters, key events, timeline changes, and the "
                "overall theme.")


def attend(q, k, v, causal):
    """Eager attention: q [heads, T, d] (rotated), k, v [kv_heads, S, d]; the last T keys are the queries' own.
    Returns (out [heads, T, d], probs [heads, T, S] float32)."""
    group = q.size(0) // k.size(0)
    k, v = k.repeat_interleave(group, dim=0), v.repeat_interleave(group, dim=0)
    logits = torch.matmul(q.float(), k.float().transpose(-1, -2)) / math.sqrt(q.size(-1))
    if causal:
        T, S = q.size(1), k.size(1)
        visible = torch.arange(S)[None, :] <= (S - T + torch.arange(T))[:, None]
        logits = logits.masked_fill(~visible, float("-inf"))
    probs = torch.softmax(logits, dim=-1, dtype=torch.float32)
    return torch.matmul(probs.to(v.dtype), v), probs


class Hermes(ReKV):
    def __init__(self, model, tokenizer, manifest, kv_size, short_term_ratio=0.1, long_term_ratio=0.3,
                 max_position_embeddings=32768, sample_fps=1.0):
        super().__init__(model, tokenizer, manifest, n_local=1, topk=1, sample_fps=sample_fps)
        self.num_layers = len(self.layers)
        self.kv_size = kv_size
        self.short_term_threshold = int(self.num_layers * short_term_ratio)
        self.long_term_threshold = int(self.num_layers * (1 - long_term_ratio))
        self.max_position_embeddings = max_position_embeddings
        self.compactions = self.reindexings = 0

    # ---------------------------------------------------------------- rotary helpers
    def rotate(self, x, positions):
        """x [heads, T, d] rotated at `positions` [T] (float32 tables, as RotaryEmbeddingESM)."""
        cos, sin = self.rope.table(int(positions.max()) + 1)
        c, s = cos[positions], sin[positions]
        return (x.float() * c + Rope.rotate_half(x).float() * s).to(x.dtype)

    def rerotate(self, k, old, new):
        """compute_cos_sin_for_positions + rotary_delta + apply_rotary_delta_to_keys_only: keys rotated at
        `old` turned by the angle of new − old."""
        cos, sin = self.rope.table(int(max(old.max(), new.max())) + 1)
        c_old, s_old, c_new, s_new = cos[old], sin[old], cos[new], sin[new]
        c = c_new * c_old + s_new * s_old  # cos(new − old)
        s = s_new * c_old - c_new * s_old  # sin(new − old)
        return (k.float() * c + Rope.rotate_half(k).float() * s).to(k.dtype)

    # ---------------------------------------------------------------- state
    def next_start_pos_per_layer(self):
        return [int(p[-1]) + 1 if p.numel() else 0 for p in self.pos]

    def encode_init_prompt(self):
        ids = torch.tensor(self.init_ids)
        n = ids.numel()
        self.k = [None] * self.num_layers
        self.v = [None] * self.num_layers
        self.pos = [torch.arange(n) for _ in range(self.num_layers)]
        self.visual_start_idx = n

        def attention(i, q, k, v):
            self.k[i], self.v[i] = self.rotate(k, self.pos[i]), v
            return attend(self.rotate(q, self.pos[i]), self.k[i], v, True)[0]

        self.run_layers(self.embed(ids), attention)

    def encode_video_chunk(self, pixel_values_videos):
        features = self.video_features(pixel_values_videos)[0]
        q_len = features.size(0)
        starts = self.next_start_pos_per_layer()
        new_pos = [torch.arange(s, s + q_len) for s in starts]

        def attention(i, q, k, v):
            self.k[i] = torch.cat([self.k[i], self.rotate(k, new_pos[i])], dim=1)
            self.v[i] = torch.cat([self.v[i], v], dim=1)
            return attend(self.rotate(q, new_pos[i]), self.k[i], self.v[i], True)[0]

        self.run_layers(features, attention)
        self.pos = [torch.cat([p, n]) for p, n in zip(self.pos, new_pos)]

    # ---------------------------------------------------------------- pseudo queries and pruning
    def query_attention(self, text):
        ids = torch.tensor(self.ids(text))
        starts = self.next_start_pos_per_layer()
        weights = [None] * self.num_layers

        def attention(i, q, k, v):
            positions = torch.arange(starts[i], starts[i] + ids.numel())
            keys = torch.cat([self.k[i], self.rotate(k, positions)], dim=1)
            out, weights[i] = attend(self.rotate(q, positions), keys, torch.cat([self.v[i], v], dim=1), True)
            return out

        self.run_layers(self.embed(ids), attention)
        return weights  # per layer [heads, T, S]: attn_weights[layer][0]

    def layer_rule(self, layer_idx):
        if layer_idx < self.short_term_threshold:
            return "short-term", "local", 1, 20
        if layer_idx >= self.long_term_threshold:
            return "long-term", "global", 0, 0.0
        progress = (layer_idx - self.short_term_threshold) / (self.long_term_threshold - self.short_term_threshold)
        return "mid-term", "mixed", 1.0 - 0.9 * progress, 20 - 19.5 * progress

    def prune_kv_cache_by_attention(self, attn):
        visual_start_idx = self.visual_start_idx
        budget_per_layer = [self.kv_size] * self.num_layers  # allocate_budget_by_depth(kv_size · L, L)
        layer_raw_scores, layer_configs = [], []
        for layer_idx in range(self.num_layers):
            layer_type, source, alpha, k = self.layer_rule(layer_idx)
            weights = attn[source][layer_idx]
            question_len = weights.shape[1]
            visual = weights.mean(dim=0)[:, visual_start_idx:-1 * question_len].mean(dim=0)
            n = visual.shape[0]
            layer_budget = budget_per_layer[layer_idx]
            if layer_type == "long-term":
                layer_budget = max(0, layer_budget - 1)
            positions = torch.arange(n, dtype=torch.float32)
            time_distances = (n - 1 - positions) / max(n - 1, 1)
            recency_weights = torch.exp(-k * time_distances)
            attn_norm = (visual - visual.min()) / (visual.max() - visual.min() + 1e-6)
            recency_norm = (recency_weights - recency_weights.min()) / (
                recency_weights.max() - recency_weights.min() + 1e-6)
            layer_raw_scores.append(attn_norm * (1 - alpha) + recency_norm * alpha)
            layer_configs.append({"budget": min(layer_budget, n), "layer_type": layer_type})
        refined = [s.clone() for s in layer_raw_scores]
        for i in range(len(refined) - 2, -1, -1):
            gamma = {"long-term": 0.4, "mid-term": 0.3}.get(layer_configs[i]["layer_type"], 0.1)
            nxt = refined[i + 1]
            if refined[i].shape[0] != nxt.shape[0]:
                nxt = torch.nn.functional.interpolate(nxt.view(1, 1, -1), size=refined[i].shape[0], mode="linear",
                                                      align_corners=False).view(-1)
            refined[i] = (1 - gamma) * refined[i] + gamma * nxt
        keep = []
        for layer_idx, score in enumerate(refined):
            top = torch.topk(score, layer_configs[layer_idx]["budget"], sorted=False)[1] + visual_start_idx
            keep.append(torch.cat([torch.arange(visual_start_idx), torch.sort(top)[0]]))
        return keep

    def shrink(self, keep_indices_per_layer):
        compact_threshold = self.max_position_embeddings - 1024
        should_compact = max(int(p[-1]) for p in self.pos) > compact_threshold
        self.reindexings += int(should_compact)
        for layer_idx in range(self.num_layers):
            k_layer, v_layer, old_pos = self.k[layer_idx], self.v[layer_idx], self.pos[layer_idx]
            safe_idx = torch.unique(keep_indices_per_layer[layer_idx], sorted=True)
            k_kept, v_kept, old_pos_kept = k_layer[:, safe_idx], v_layer[:, safe_idx], old_pos[safe_idx]
            new_pos_kept = torch.arange(len(safe_idx)) if should_compact else old_pos_kept
            k_kept = self.rerotate(k_kept, old_pos_kept, new_pos_kept) if should_compact else k_kept
            k_final, v_final, pos_final = k_kept, v_kept, new_pos_kept
            mask = torch.ones(k_layer.shape[1], dtype=torch.bool)
            mask[safe_idx] = False
            prune = torch.nonzero(mask).squeeze(1)
            if layer_idx >= self.long_term_threshold and prune.numel() > 0:
                summary_pos = len(safe_idx) if should_compact else int(new_pos_kept[-1]) + 1
                target = torch.full((prune.numel(),), summary_pos)
                k_summary = self.rerotate(k_layer[:, prune], old_pos[prune], target).mean(dim=1, keepdim=True)
                v_summary = v_layer[:, prune].mean(dim=1, keepdim=True)
                k_final = torch.cat([k_kept, k_summary], dim=1)
                v_final = torch.cat([v_kept, v_summary], dim=1)
                pos_final = torch.cat([new_pos_kept, torch.tensor([summary_pos])])
            self.k[layer_idx], self.v[layer_idx], self.pos[layer_idx] = k_final, v_final, pos_final
        self.compactions += 1

    def predict_and_compress(self):
        attn = {"local": self.query_attention(LOCAL_QUERY), "global": self.query_attention(GLOBAL_QUERY),
                "mixed": self.query_attention(LOCAL_QUERY + "; " + GLOBAL_QUERY)}
        keep = self.prune_kv_cache_by_attention(attn)
        if self.k[0].shape[1] > self.kv_size:
            self.shrink(keep)

    # ---------------------------------------------------------------- answering
    def question_answering(self, prompt, max_new_tokens):
        """The prompt at each layer's next positions over the cache, greedy to EOS; the cache is cut back."""
        saved = (list(self.k), list(self.v), list(self.pos))
        output_ids, first = [], None
        h = self.embed(torch.tensor(self.ids(prompt)))
        for step in range(max_new_tokens):
            starts = self.next_start_pos_per_layer()
            T = h.size(0)

            def attention(i, q, k, v):
                positions = torch.arange(starts[i], starts[i] + T)
                self.k[i] = torch.cat([self.k[i], self.rotate(k, positions)], dim=1)
                self.v[i] = torch.cat([self.v[i], v], dim=1)
                self.pos[i] = torch.cat([self.pos[i], positions])
                return attend(self.rotate(q, positions), self.k[i], self.v[i], True)[0]

            logits = self.logits(self.run_layers(h, attention))
            if first is None:
                first = logits.clone()
            token = int(torch.topk(logits, 1).indices[0])
            output_ids.append(token)
            if token in self.eos or step == max_new_tokens - 1:
                break
            h = self.embed(torch.tensor([token]))
        self.k, self.v, self.pos = saved
        return output_ids, first

    def stream(self, pixel_values_videos, questions, prompt_of, max_new_tokens):
        """Frames [0, int(t · fps)) encoded one at a time, each followed by predict_and_compress; then the
        question. Returns per question the frames, memory tokens per layer, compactions, ids, logits."""
        self.encode_init_prompt()
        self.compactions = self.reindexings = 0
        done, results = 0, []
        for question in questions:
            end = int(question["time"] * self.sample_fps)
            for f in range(done, end):
                self.encode_video_chunk(pixel_values_videos[:, f:f + 1])
                self.predict_and_compress()
            done = max(done, end)
            ids, first = self.question_answering(prompt_of(question), max_new_tokens)
            results.append({"frames": done, "ids": ids, "logits": first, "compactions": self.compactions,
                            "reindexings": self.reindexings,
                            "layer_tokens": [k.shape[1] - self.visual_start_idx for k in self.k],
                            "positions": [p[self.visual_start_idx:].tolist() for p in self.pos]})
        return results
