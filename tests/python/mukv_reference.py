"""MuKV's streaming question answering in the order of steps of its reference code (IMBALDY/MuKV:
scripts/run_mukv_rvs_ego.py drives model/mukv_rerank.py → model/mukv_dualsignal_compression.py), over
a tiny export's Hugging Face LLaVA-OneVision, for tests/python/test_mukv_parity.py to hold svqa's
`mukv` preset against.

Per stream: the init prompt's cache; per question, in order: the frames [int(encoded end), int(t·fps))
encoded in chunks of `chunk` frames (`encode_video`); per chunk, vision → pooled features (no image
newline), then per granularity (49, 196, 784 tokens) each whole block of the chunk's token run
prefilled alone over the init cache with eager attention (`_encode_granularity_chunk_with_compression`:
a chunk's tokens short of a block are lost), its kept tokens chosen by the dual signal
(mukv_dcp_reference.py, the transcription of `_compute_token_importance` / `_select_tokens_with_dedup`),
stored with the mean kept last-layer key as representative; then `question_answering`: the raw
question over the init cache, its last token's last-layer key the query; per granularity the cosine
top 2·k (`torch.topk`); the rerank context the mean representative of the best `rerank_top_n` of the
SHORTLISTED segments; frame / patch scores (1 − λ)·s + λ·cos(r, c); top k each; the cache
[init | patches | frames | segments] at the blocks' own positions; the answer prompt then greedy
decoding, each new token after the cache's length.

Stop ids are the export's EOS ids (the reference stops at its tokenizer's eos_token_id, one of them).
"""

import copy

import numpy as np
import torch
from transformers import DynamicCache

from backbone_reference import pixel_values
from mukv_dcp_reference import compute_token_importance, select_tokens_with_dedup

GRANULARITIES = (49, 196, 784)


class MukvReference:
    def __init__(self, model, manifest, tok, settings):
        self.model, self.manifest, self.tok, self.s = model, manifest, tok, settings
        self.lm = model.model.language_model
        self.head = model.lm_head
        self.embed = model.get_input_embeddings()
        # One list per granularity, in store order: (representative, [(k, v) per layer], (first, last) frame).
        self.store = {g: [] for g in GRANULARITIES}
        self.init = None

    def ids(self, text):
        return torch.tensor([self.tok.encode(text, add_special_tokens=False).ids])

    def forward(self, embeds, cache, attentions=False):
        with torch.no_grad():  # the reference runs under torch.inference_mode
            return self.lm(inputs_embeds=embeds, past_key_values=cache, use_cache=True, output_attentions=attentions)

    def encode_init_prompt(self, sink):
        with torch.no_grad():
            self.init = self.forward(self.embed(self.ids(sink)), DynamicCache()).past_key_values

    def encode_video(self, frames, first_frame):
        for start in range(0, len(frames), self.s["chunk"]):
            chunk = frames[start:start + self.s["chunk"]]
            with torch.no_grad():
                features = self.model.model.get_video_features(**pixel_values(self.manifest, chunk)).pooler_output[0, :-1]
            for g in GRANULARITIES:
                self.encode_granularity(features, g, first_frame + start)

    def encode_granularity(self, features, g, chunk_first):
        per_frame = self.manifest["vision"]["tokens_per_frame"]
        init_len = self.init.get_seq_length()
        for b in range(features.shape[0] // g):
            out = self.forward(features[b * g:(b + 1) * g][None], copy.deepcopy(self.init), attentions=True)
            kvs = [(layer.keys[:, :, init_len:], layer.values[:, :, init_len:]) for layer in out.past_key_values.layers]
            scores = compute_token_importance(out.attentions, kvs[-1][0], init_len, "last", "attention_fft_weighted",
                                              "fft", self.s["alpha"][g])
            target = int(g * self.s["keep_ratio"][g])
            kept = torch.sort(select_tokens_with_dedup(kvs[-1][0], scores, target, 0.9, False))[0]
            kvs = [(k[:, :, kept], v[:, :, kept]) for k, v in kvs]
            rep = kvs[-1][0].mean(dim=2).reshape(-1)
            first = chunk_first + (b * g) // per_frame
            self.store[g].append((rep, kvs, (first, chunk_first + ((b + 1) * g - 1) // per_frame)))

    def question_answering(self, question, steps):
        k = self.s["blocks"]  # per granularity
        with torch.no_grad():
            out = self.forward(self.embed(self.ids(question)), copy.deepcopy(self.init))
        query = out.past_key_values.layers[-1].keys[:, :, -1, :].reshape(-1)
        candidates = {}
        for g in GRANULARITIES:
            if not self.store[g]:
                candidates[g] = []
                continue
            reps = torch.stack([r for r, _, _ in self.store[g]])
            sims = torch.cosine_similarity(query[None], reps, dim=1)
            scores, idx = torch.topk(sims, min(2 * k[g], len(sims)))
            candidates[g] = [(float(s), int(i)) for s, i in zip(scores, idx)]
        coarse = sorted(candidates[784], key=lambda c: c[0], reverse=True)[:self.s["rerank_top_n"]]
        context = (torch.stack([self.store[784][i][0] for _, i in coarse]).mean(0) if coarse else query)
        final = {784: sorted(candidates[784], key=lambda c: c[0], reverse=True)[:k[784]]}
        for g in (196, 49):
            lam = self.s["lambda"][g]
            rescored = [((1 - lam) * s + lam * float(torch.cosine_similarity(self.store[g][i][0][None], context[None], dim=1)), i)
                        for s, i in candidates[g]]
            final[g] = sorted(rescored, key=lambda c: c[0], reverse=True)[:k[g]]
        chosen = [(g, i) for g in GRANULARITIES for _, i in final[g]]

        cache = DynamicCache()
        for layer, init_layer in enumerate(self.init.layers):
            ks = [init_layer.keys] + [self.store[g][i][1][layer][0] for g, i in chosen]
            vs = [init_layer.values] + [self.store[g][i][1][layer][1] for g, i in chosen]
            cache.update(torch.cat(ks, dim=2), torch.cat(vs, dim=2), layer)
        generated = []
        with torch.no_grad():
            x = self.embed(self.ids(self.s["prompt"].replace("{question}", question)))
            for _ in range(steps):
                out = self.forward(x, cache)
                cache = out.past_key_values
                token = int(self.head(out.last_hidden_state[0, -1]).argmax())
                generated.append(token)
                if token in self.manifest["tokens"]["eos"]:
                    break
                x = self.embed(torch.tensor([[token]]))
        return chosen, generated


def svqa_block_ids(store, chunks):
    """(granularity, index in its store) → the bank id svqa gives that block: svqa adds each frame's 4 patch
    blocks then its frame block, and a segment block after its 4th frame; a chunk's frames short of a
    segment are dropped (segment_leftovers: drop). `chunks` lists each encode chunk's (first, count)."""
    ids, next_id, counters = {}, 0, {g: 0 for g in GRANULARITIES}
    for first, count in chunks:
        for f in range(first, first + count):
            for g in (49, 49, 49, 49, 196):
                ids[(g, counters[g])] = next_id
                counters[g] += 1
                next_id += 1
            if (f - first) % 4 == 3:
                ids[(784, counters[784])] = next_id
                counters[784] += 1
                next_id += 1
    assert all(counters[g] == len(store[g]) for g in GRANULARITIES), (counters, {g: len(store[g]) for g in store})
    return ids


def frames_npy(n, side, seed):
    return np.random.default_rng(seed).integers(0, 256, size=(n, side, side, 3), dtype=np.uint8)
