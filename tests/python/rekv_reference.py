"""ReKV's question-answering path transcribed in Python over a Hugging Face LLaVA-OneVision model
(reference code Becomebright/ReKV @ 63793f7), step by step as the reference runs it, for
tests/python/test_rekv_parity.py. What each piece transcribes:

  video_qa/rekv_stream_vqa.py  StreamDriver.answer_at: frames [int(prev), int(end_time·fps)), a
                               float32 tensor times fps; open-ended (256) or, here, multiple choice (16)
  video_qa/base.py             format_mcqa_prompt
  model/abstract_rekv.py       encode_init_prompt, _encode_video_chunk, encode_video (chunks of 64)
  model/llava_onevision_rekv.py  init prompt, get_prompt, _get_video_features, question_answering
  model/attention/rope.py      RotaryEmbeddingESM: float32 tables of positions 0..len−1
  model/attention/kv_cache_manager.py  ContextManager: append / _append / get_global_hidden_and_mask /
                               _append_global / _calc_block_topk / get_retrieved_kv
  model/attention/rekv_attention.py  the retrieval and answering passes (tuple cache path)
  model/attention/dot_production_attention/torch_impl.py  multi-stage attention (one softmax, masks)

Batch size 1 throughout; the Qwen2 decoder layers are run from the HF model's own modules.
"""

import math

import torch

INIT_PROMPT = "<|im_start|>system \nYou are a helpful assistant.<|im_end|><|im_start|>user "
CHOICE_LETTERS = ["A", "B", "C", "D", "E", "F", "G", "H"]


def get_prompt(query, mc=False):
    prompt = f"\n{query}<|im_end|><|im_start|>assistant\n"
    if mc:
        prompt += "Best option: ("
    return prompt


def format_mcqa_prompt(question, candidates):
    formatted_choices = "\n".join(["(" + CHOICE_LETTERS[i] + ") " + c for i, c in enumerate(candidates)])
    formatted_question = f"Question: {question}\nOptions:\n{formatted_choices}\nOnly give the best option."
    return {"question": f"{question}", "formatted_question": formatted_question,
            "prompt": get_prompt(formatted_question, mc=True)}


class Rope:
    """RotaryEmbeddingESM: inv_freq and tables in float32, applied as (x.float()·cos + rot(x).float()·sin).to(dtype)."""

    def __init__(self, dim, base):
        self.inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))

    def table(self, seq_len):
        t = torch.arange(seq_len).type_as(self.inv_freq)
        freqs = torch.outer(t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos(), emb.sin()

    @staticmethod
    def rotate_half(x):
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat((-x2, x1), dim=-1)

    def apply(self, x, length, right, cos, sin):
        cos, sin = cos[right - length:right, :], sin[right - length:right, :]
        return ((x.float() * cos) + (self.rotate_half(x).float() * sin)).to(x.dtype)

    def __call__(self, q, k):
        """forward(q, k): k at 0..len_k−1, q at the last len_q of them."""
        cos, sin = self.table(k.size(-2))
        return self.apply(q, q.size(-2), k.size(-2), cos, sin), self.apply(k, k.size(-2), k.size(-2), cos, sin)

    def one_angle(self, x, index):
        cos, sin = self.table(index)
        return ((x.float() * cos[index - 1:index]) + (self.rotate_half(x).float() * sin[index - 1:index])).to(x.dtype)


class MultiStageAttention:
    """torch_impl.TorchMultiStageDotProductionAttention: segments' logits under one softmax."""

    def __init__(self):
        self.logits, self.values, self.masks = [], [], []

    def append(self, q, k, v, sliding_window=None, complement_sliding_window=False):
        len_q, len_k = q.size(-2), k.size(-2)
        group = q.size(0) // k.size(0)
        k = k.repeat_interleave(group, dim=0)
        v = v.repeat_interleave(group, dim=0)
        if sliding_window is None:
            mask = torch.ones((len_q, len_k), dtype=torch.bool)
        else:
            if isinstance(sliding_window, int):
                sliding_window = (len_k - len_q, sliding_window)
            dist = torch.arange(len_q)[:, None] - torch.arange(len_k)[None, :] + sliding_window[0]
            mask = dist >= sliding_window[1] if complement_sliding_window else (dist < sliding_window[1]) & (dist >= 0)
        logits = torch.matmul(q, k.transpose(-1, -2)).masked_fill(~mask, float("-inf")) * (1 / math.sqrt(q.size(-1)))
        self.logits.append(logits)
        self.values.append(v)
        self.masks.append(mask)

    def result(self):
        p = torch.softmax(torch.cat(self.logits, dim=-1), dim=-1)
        out, st = 0, 0
        for v, mask in zip(self.values, self.masks):
            ed = st + v.size(-2)
            out = out + torch.matmul(p[..., st:ed].masked_fill(~mask, 0), v)
            st = ed
        return out


def expand_kv(t, heads):
    """_from_group_kv: each kv head repeated for its group of query heads."""
    return t.repeat_interleave(heads // t.size(0), dim=0)


class ContextManager:
    """kv_cache_manager.ContextManager for one layer (batch 1; tensors [heads, tokens, d])."""

    def __init__(self, rope, n_init, n_local, block_size, topk, chunk_size, heads):
        self.rope, self.n_init, self.n_local = rope, n_init, n_local
        self.block_size = self.exc_block_size = block_size
        self.topk, self.chunk_size, self.heads = topk, chunk_size, heads
        self.local_k = self.local_v = None
        self.remainder_k = self.remainder_v = None
        self.init_k = self.init_v = None
        self.init_exc = False
        self.blocks = []   # offloaded (k, v) per frame
        self.block_k = []  # representative vectors
        self.retrieved = None

    # ------------------------------------------------------------------ encoding
    def append(self, q, k, v):
        if self.local_k is None:
            empty = k[:, :0]
            self.local_k, self.local_v = empty, empty
            self.remainder_k, self.remainder_v = empty, empty
            self.init_k, self.init_v = empty, empty
        input_length = q.size(-2)
        self.local_k = torch.cat((self.local_k, k), dim=-2)
        self.local_v = torch.cat((self.local_v, v), dim=-2)
        kv_length = self.local_k.size(-2)
        self.rem_st, self.rem_ed = 0, self.remainder_k.size(-2)
        self.remainder_k = torch.cat((self.remainder_k, k), dim=-2)
        self.remainder_v = torch.cat((self.remainder_v, v), dim=-2)
        global_q = self.rope.one_angle(q, self.n_local)
        outs = []
        for st in range(0, input_length, self.exc_block_size):
            ed = min(st + self.exc_block_size, input_length)
            kv_st = max(kv_length + st - input_length - self.n_local, 0)
            kv_ed = kv_length + ed - input_length
            outs.append(self._append(q[:, st:ed], self.local_k[:, kv_st:kv_ed], self.local_v[:, kv_st:kv_ed],
                                     global_q[:, st:ed]))
            self._append_global()
        if self.local_k.size(-2) >= self.n_local:
            self.local_k, self.local_v = self.local_k[:, -self.n_local:], self.local_v[:, -self.n_local:]
        self.remainder_k, self.remainder_v = self.remainder_k[:, self.rem_st:], self.remainder_v[:, self.rem_st:]
        return torch.cat(outs, dim=-2)

    def _append(self, local_q, local_k, local_v, global_q):
        local_h_q, local_h_k = self.rope(local_q, local_k)
        attn = MultiStageAttention()
        attn.append(local_h_q, local_h_k, local_v, sliding_window=self.n_local)
        init_k, init_v = self._global_hidden(global_q.size(-2))
        attn.append(global_q, init_k, init_v, sliding_window=None, complement_sliding_window=True)
        return attn.result()

    def _global_hidden(self, exc_length):
        """get_global_hidden_and_mask: the sinks move in once the tokens not yet moved exceed n_local."""
        rem_ed = self.rem_ed + exc_length
        rem_st = self.rem_st
        rem_len = rem_ed - rem_st
        if not self.init_exc and rem_len > self.n_local:
            add = min(self.n_init - self.init_k.size(-2), rem_len - self.n_local)
            self.init_k = torch.cat((self.init_k, self.remainder_k[:, rem_st:rem_st + add]), dim=-2)
            self.init_v = torch.cat((self.init_v, self.remainder_v[:, rem_st:rem_st + add]), dim=-2)
            rem_st += add
            if self.init_k.size(-2) == self.n_init:
                self.init_exc = True
        self.rem_ed, self.rem_st = rem_ed, rem_st
        return self.init_k, self.init_v

    def _append_global(self):
        """Offload every whole block of the remainder once the sinks are complete."""
        if not self.init_exc:
            return
        rem_len = self.rem_ed - self.rem_st
        assert rem_len % self.block_size == 0
        while rem_len > 0:
            st = self.rem_st
            k = self.remainder_k[:, st:st + self.block_size]
            self.blocks.append((k, self.remainder_v[:, st:st + self.block_size]))
            self.block_k.append(expand_kv(k, self.heads).mean(dim=-2).reshape(-1))
            self.rem_st += self.block_size
            rem_len -= self.block_size

    # ------------------------------------------------------------------ retrieval
    def calc_block_topk(self, global_q):
        q = global_q.mean(dim=1).reshape(-1)
        logits = None
        if len(self.blocks) <= self.topk:
            if not self.init_exc:  # the window never filled: retrieval inside the buffer
                k = expand_kv(self.remainder_k[:, self.n_init:], self.heads)
                assert k.size(-2) % self.block_size == 0
                block_num = k.size(-2) // self.block_size
                if block_num <= self.topk:
                    ret = list(range(block_num))
                else:
                    k = k.transpose(0, 1).reshape(block_num, self.block_size, -1).mean(dim=1)
                    logits = torch.matmul(k, q)
            else:
                ret = list(range(len(self.blocks)))
        else:
            logits = torch.matmul(torch.stack(self.block_k).float(), q.float())
        if logits is not None:
            n = logits.size(0)
            rem = n % self.chunk_size
            chunked = logits[:n - rem].reshape(-1, self.chunk_size).mean(dim=-1)
            if rem > 0:
                chunked = torch.cat([chunked, logits[-rem:].mean(dim=-1, keepdim=True)])
            top = chunked.topk(self.topk // self.chunk_size).indices.sort()[0]
            ret = (top[:, None] * self.chunk_size + torch.arange(self.chunk_size)[None, :]).reshape(-1).tolist()
            ret = [i for i in ret if i < n]
        return ret

    def retrieved_kv(self, global_q):
        """get_retrieved_kv: [init | retrieved blocks in temporal order]."""
        self.retrieved = self.calc_block_topk(global_q)
        if self.init_exc:
            ks, vs = [self.init_k], [self.init_v]
            for b in self.retrieved:
                ks.append(self.blocks[b][0])
                vs.append(self.blocks[b][1])
        else:
            ks, vs = [self.remainder_k[:, :self.n_init]], [self.remainder_v[:, :self.n_init]]
            for b in self.retrieved:
                st = self.n_init + b * self.block_size
                if st >= self.remainder_k.size(-2):
                    break
                ks.append(self.remainder_k[:, st:st + self.block_size])
                vs.append(self.remainder_v[:, st:st + self.block_size])
        k, v = torch.cat(ks, dim=-2), torch.cat(vs, dim=-2)
        assert k.size(-2) <= self.n_init + self.n_local
        return k, v


def tuple_attention(rope, q, k_new, v_new, past, n_init, n_local, keep):
    """rekv_attention_forward's question-answering path: past (K, V) un-rotated plus the new tokens;
    sliding window of n_local at positions relative to it, sinks beyond. Returns (out, cache)."""
    len_q = q.size(-2)
    h_k = torch.cat([past[0], k_new], dim=-2)
    h_v = torch.cat([past[1], v_new], dim=-2)
    len_k = h_k.size(-2)
    if keep:
        if len_k <= n_local + n_init:
            cache = (h_k, h_v)
        else:
            cache = (torch.cat([h_k[:, :n_init], h_k[:, max(0, len_k - n_local):]], dim=-2),
                     torch.cat([h_v[:, :n_init], h_v[:, max(0, len_k - n_local):]], dim=-2))
    else:
        cache = past
    k_, v_ = h_k, h_v
    if len_q + n_local < k_.size(-2):
        k_, v_ = k_[:, k_.size(-2) - len_q - n_local:], v_[:, v_.size(-2) - len_q - n_local:]
    local_q, local_k = rope(q, k_)
    if len_k > n_local:
        init_q, init_k, init_v = rope.one_angle(q, n_local), h_k[:, :n_init], h_v[:, :n_init]
    else:
        init_q, init_k, init_v = q, h_k[:, :0], h_v[:, :0]
    attn = MultiStageAttention()
    attn.append(local_q, local_k, v_, sliding_window=n_local)
    attn.append(init_q, init_k, init_v, sliding_window=(len_k - len_q, n_local), complement_sliding_window=True)
    return attn.result(), cache


class ReKV:
    """LlavaOneVision_ReKV over an HF model, with the streaming driver of rekv_stream_vqa.py."""

    def __init__(self, model, tokenizer, manifest, n_local, topk, chunk_size=1, sample_fps=1.0, encode_chunk_size=64):
        self.model, self.tok, self.manifest = model, tokenizer, manifest
        text = manifest["text"]
        self.heads, self.kv_heads, self.d = text["num_heads"], text["num_kv_heads"], text["head_dim"]
        self.rope = Rope(self.d, text["rope_theta"])
        self.n_frame_tokens = manifest["vision"]["tokens_per_frame"]
        self.n_local, self.topk, self.chunk_size, self.sample_fps = n_local, topk, chunk_size, sample_fps
        # encode_video's 64 frames a chunk, which must fit in n_local (asserted in _encode_video_chunk):
        # a tiny window takes fewer (results do not depend on it: exec blocks are one frame).
        self.encode_chunk_size = encode_chunk_size
        self.init_ids = self.ids(INIT_PROMPT)
        self.n_init = len(self.init_ids)
        self.eos = set(manifest["tokens"]["eos"])  # tokenizer.eos_token_id
        lm = model.model.language_model
        self.layers, self.norm, self.embed = lm.layers, lm.norm, lm.embed_tokens

    def ids(self, text):
        return self.tok.encode(text).ids

    # -------------------------------------------------------------- the LLM with a per-layer attention
    def run_layers(self, h, attention):
        """Qwen2 decoder layers with `attention(layer, q, k, v)` → [heads, T, d] (q, k, v un-rotated)."""
        T = h.size(0)
        for i, layer in enumerate(self.layers):
            x = layer.input_layernorm(h)
            a = layer.self_attn
            q = a.q_proj(x).view(T, self.heads, self.d).transpose(0, 1)
            k = a.k_proj(x).view(T, self.kv_heads, self.d).transpose(0, 1)
            v = a.v_proj(x).view(T, self.kv_heads, self.d).transpose(0, 1)
            o = attention(i, q, k, v)
            h = h + a.o_proj(o.transpose(0, 1).reshape(T, self.heads * self.d))
            h = h + layer.mlp(layer.post_attention_layernorm(h))
        return h

    def logits(self, h):
        return self.model.lm_head(self.norm(h[-1:]))[0]

    # -------------------------------------------------------------- encoding
    def clear_cache(self):
        self.kv = [ContextManager(self.rope, self.n_init, self.n_local, self.n_frame_tokens, self.topk,
                                  self.chunk_size, self.heads) for _ in self.layers]

    def encode_init_prompt(self):
        h = self.embed(torch.tensor(self.init_ids))
        self.run_layers(h, lambda i, q, k, v: self.kv[i].append(q, k, v))

    def video_features(self, pixel_values_videos):
        """_get_video_features: vision tower layer, select strategy, projector, 2x pooling; no newline."""
        m = self.model.model
        b, frames, c, hh, ww = pixel_values_videos.shape
        out = m.vision_tower(pixel_values_videos.view(b * frames, c, hh, ww), output_hidden_states=True)
        feature = out.hidden_states[self.model.config.vision_feature_layer]
        if self.model.config.vision_feature_select_strategy == "default":
            feature = feature[:, 1:]
        feature = m.apply_pooling(m.multi_modal_projector(feature))
        return feature.reshape(b, frames * feature.shape[1], -1)

    def encode_video_chunk(self, pixel_values_videos):
        features = self.video_features(pixel_values_videos)[0]
        assert self.n_local >= features.size(0)
        self.run_layers(features, lambda i, q, k, v: self.kv[i].append(q, k, v))

    def encode_video(self, pixel_values_videos):
        n, encode_chunk_size = pixel_values_videos.size(1), self.encode_chunk_size
        for st in range(0, n, encode_chunk_size):
            self.encode_video_chunk(pixel_values_videos[:, st:st + encode_chunk_size])

    # -------------------------------------------------------------- question answering
    def question_answering(self, input_text, max_new_tokens):
        """Retrieval pass of the raw question (each layer retrieves with its mean query), the answer
        prompt over [init | retrieved], greedy decoding to EOS. Returns (ids, retrieved per layer,
        first-token logits)."""
        caches = [None] * len(self.layers)

        def retrieval(i, q, k, v):
            past = self.kv[i].retrieved_kv(q)
            out, caches[i] = tuple_attention(self.rope, q, k, v, past, self.n_init, self.n_local, keep=False)
            return out

        self.run_layers(self.embed(torch.tensor(self.ids(input_text["question"]))), retrieval)
        retrieved = [list(c.retrieved) for c in self.kv]
        output_ids, first = self.greedy(caches, input_text["prompt"], max_new_tokens, self.n_local)
        return output_ids, retrieved, first

    def greedy(self, caches, prompt, max_new_tokens, n_local):
        """The answer prompt over the per-layer tuple caches, then greedy decoding to EOS (the tuple
        cache path, window `n_local`). Returns (ids, first-token logits)."""

        def answering(i, q, k, v):
            out, caches[i] = tuple_attention(self.rope, q, k, v, caches[i], self.n_init, n_local, keep=True)
            return out

        output_ids, first = [], None
        h = self.embed(torch.tensor(self.ids(prompt)))
        for step in range(max_new_tokens):
            logits = self.logits(self.run_layers(h, answering))
            if first is None:
                first = logits.clone()
            token = int(torch.topk(logits, 2).indices[0])
            output_ids.append(token)
            if token in self.eos or step == max_new_tokens - 1:
                break
            h = self.embed(torch.tensor([token]))
        return output_ids, first

    def stream(self, pixel_values_videos, questions):
        """rekv_stream_vqa.analyze_a_video with multiple-choice questions (question, end_time,
        candidates) in file order: encode up to int(end_time · fps), then answer (16 tokens)."""
        self.clear_cache()
        self.encode_init_prompt()
        start = end = 0
        results = []
        for question, end_time, candidates in questions:
            window = (torch.tensor([0, end_time]) * self.sample_fps).tolist()
            if window[-1] > end:
                end = window[-1]
                self.encode_video(pixel_values_videos[:, int(start):int(end)])
                start = end
            ids, retrieved, first = self.question_answering(format_mcqa_prompt(question, candidates), 16)
            results.append({"frames": int(end), "ids": ids, "retrieved": retrieved, "logits": first})
        return results
