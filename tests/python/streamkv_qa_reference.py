"""StreamKV's question answering in the order of steps of its reference code (sou1p0wer/StreamKV @
b0dbe3f) over a Hugging Face LLaVA-OneVision model, for tests/python/test_streamkv_parity.py. What
each piece transcribes (the rest is ReKV's, called from rekv_reference.py):

  video_qa/streamkv_stream_vqa.py  analyze_a_video: per question clear_cache, encode_init_prompt,
                                   encode_video(video[0:int(end_time·fps)]), then the answer (MC: 16)
  model/abstract_streamkv.py       encode_video (semantic mode: per-frame features, the online rule of
                                   streamkv_reference.segment, the open segment encoded at the end),
                                   _encode_video_chunk ([entries; summary] + guidance prompt in one
                                   forward, the compression budget obtain_cdf_num + rescale_sum_match)
  model/attention/streamkv_attention.py  the guidance branch (its queries attend causally to this
                                   input only, positions 0…len−1, window n_local; K/V not stored) and
                                   the retrieval / answering passes (plain causal attention over
                                   [init | retrieved | new] at contiguous positions: no window fallback)
  model/attention/kv_cache_manager.py  ContextManager: ReKV's, except the sinks
                                   (get_global_hidden_and_mask: all n_init move when the init prompt
                                   ends, attended once a block's window holds more than n_local
                                   tokens, and still in the window), calculate_score / compress_kv,
                                   _calc_block_topk (recent local_size + top of the older)
  model/llava_onevision_streamkv.py  question_answering: probe pass, allocation over layers, second
                                   pass, answer prompt, greedy decoding to EOS
"""

import torch

from rekv_reference import ContextManager, ReKV, MultiStageAttention, format_mcqa_prompt, tuple_attention
from streamkv_reference import cdf_counts, rescale, segment

# load_model's encode_prompt, verbatim (one line there; no space after the items' periods, an em dash in item 6).
GUIDANCE_PROMPT = (
    "For this event segment in the video, please prioritize retaining the following visual information:1)Key objects, "
    "people, and their attributes, and any changes or transitions during the event.2)Major actions, state transitions, "
    "and interactions (e.g., who/what is doing what, when, and where), including the precise timing of key moments."
    "3)On-screen text, numbers, and all visible cues (such as labels, scores, timer, signs, etc.).4)Causal "
    "relationships, outcome(s), anomalies, and salient shifts within the segment (e.g., cause-effect chains, rare or "
    "surprising events, turning points).5)Counts and spatial arrangements of important objects or people, as well as "
    "layout details that may support summarization, prediction, or sequential reasoning in later queries.6)Any "
    "misleading, ambiguous, or easily confused visual clues\u2014ensure enough context is preserved to distinguish "
    "the current event state from similar past/future states.")
NO_WINDOW = 9999999  # streamkv_attention.py's sliding_window at question time: no window


class StreamkvContextManager(ContextManager):
    """One layer's kv_cache_manager.ContextManager of StreamKV. `origin[i]` is the stream ordinal of
    the i-th block this layer still stores (every layer offloads the same blocks; compression deletes
    some per layer)."""

    def __init__(self, rope, n_init, n_local, block_size, heads, retrieve_size, local_size):
        super().__init__(rope, n_init, n_local, block_size, retrieve_size, 1, heads)
        self.local_size = local_size
        self.origin, self.offloaded = [], 0
        self.local_len = 0
        self.score = None       # layer_compression_score, then layer_retrieval_score
        self.probing = False    # retrieval_prefill
        self.count = None       # retrieval_num of the second pass
        self.plain_top = None   # the second pass's top `count` without the recent rule (for the test)

    def _append(self, local_q, local_k, local_v, global_q):
        self.local_len = local_k.size(-2)  # get_global_hidden_and_mask's local_h_k_len
        return super()._append(local_q, local_k, local_v, global_q)

    def _global_hidden(self, exc_length):
        rem_ed = self.rem_ed + exc_length
        if not self.init_exc and rem_ed - self.rem_st == self.n_init:  # the init prompt's last exec block
            add = self.n_init - self.init_k.size(-2)
            self.init_k = torch.cat((self.init_k, self.remainder_k[:, self.rem_st:self.rem_st + add]), dim=-2)
            self.init_v = torch.cat((self.init_v, self.remainder_v[:, self.rem_st:self.rem_st + add]), dim=-2)
            self.rem_st += add
            self.init_exc = self.init_k.size(-2) == self.n_init
        self.rem_ed = rem_ed
        if self.init_exc and self.local_len > self.n_local:
            return self.init_k, self.init_v
        return self.init_k[:, :0], self.init_v[:, :0]

    def _append_global(self):
        before = len(self.blocks)
        super()._append_global()
        for _ in range(len(self.blocks) - before):
            self.origin.append(self.offloaded)
            self.offloaded += 1

    def score_segment(self, n_blocks, guidance_q):
        """calculate_score: mean guidance query · the segment's frame blocks (its summary excluded)."""
        g = guidance_q.mean(dim=1).reshape(-1).float()
        n = len(self.block_k)
        self.score = torch.stack(self.block_k[n - n_blocks:n - 1]).float() @ g

    def compress(self, n_blocks, keep):
        """compress_kv: the top `keep` frame blocks by score and the summary stay."""
        kept = set(self.score.topk(keep).indices.tolist()) | {n_blocks - 1}
        first = len(self.blocks) - n_blocks
        for i in reversed(range(n_blocks)):
            if i not in kept:
                del self.blocks[first + i], self.block_k[first + i], self.origin[first + i]

    def calc_block_topk(self, global_q):
        q = global_q.mean(dim=1).reshape(-1).float()
        logits = torch.stack(self.block_k).float() @ q
        if self.probing:
            self.score = logits
        count, n = (self.topk if self.probing else self.count), len(self.blocks)
        self.plain_top = sorted(logits.topk(min(count, n)).indices.tolist())
        if n <= count:
            return list(range(n))
        if count >= self.local_size:
            top = logits[:n - self.local_size].topk(count - self.local_size).indices.tolist()
            return sorted(top + list(range(n - self.local_size, n)))
        return list(range(n - count, n))

    def retrieved_kv(self, global_q):
        """get_retrieved_kv: [init | the chosen blocks in bank order]."""
        self.retrieved = self.calc_block_topk(global_q)
        ks = [self.init_k] + [self.blocks[b][0] for b in self.retrieved]
        vs = [self.init_v] + [self.blocks[b][1] for b in self.retrieved]
        return torch.cat(ks, dim=-2), torch.cat(vs, dim=-2)


class StreamKV(ReKV):
    """LlavaOneVision_StreamKV over an HF model, driven as streamkv_stream_vqa.py drives it. `s` holds the
    preset's settings: sink prompt, n_local, m, M, θ, keep, compress_temp, retrieve_size, retrieve_temp,
    local_size, max_per_layer, fps."""

    def __init__(self, model, tokenizer, manifest, s):
        self.s = s
        super().__init__(model, tokenizer, manifest, s["n_local"], s["retrieve_size"], sample_fps=s["fps"])
        self.init_ids = self.ids(s["sink_prompt"])
        self.n_init = len(self.init_ids)
        self.guidance_ids = self.ids(GUIDANCE_PROMPT)

    def clear_cache(self):
        self.kv = [StreamkvContextManager(self.rope, self.n_init, self.n_local, self.n_frame_tokens, self.heads,
                                          self.s["retrieve_size"], self.s["local_size"]) for _ in self.layers]

    # -------------------------------------------------------------- encoding
    def frame_features(self, pixel_values_videos):
        """encode_video's per-frame _get_video_features: [tokens, D] per frame."""
        return [self.video_features(pixel_values_videos[:, f:f + 1])[0] for f in range(pixel_values_videos.size(1))]

    def encode_segment(self, entries):
        """_encode_video_chunk with the summary frame and the guidance prompt; returns per-layer keep counts."""
        frames = len(entries)
        assert self.n_local >= frames * self.n_frame_tokens
        video = torch.cat(entries + [torch.stack(entries).mean(dim=0)])
        video_len = video.size(0)
        h = torch.cat([video, self.embed(torch.tensor(self.guidance_ids))])

        def attention(i, q, k, v):
            out_video = self.kv[i].append(q[:, :video_len], k[:, :video_len], v[:, :video_len])
            prompt_q, keys = self.rope(q[:, video_len:], k)
            attn = MultiStageAttention()
            attn.append(prompt_q, keys, v, sliding_window=self.n_local)
            self.kv[i].score_segment(frames + 1, q[:, video_len:])
            return torch.cat([out_video, attn.result()], dim=-2)

        self.run_layers(h, attention)
        keep, temp, layers = self.s["keep"], self.s["compress_temp"], len(self.layers)
        counts = cdf_counts([kv.score for kv in self.kv], int(layers * frames * keep))
        lo = max(1, int((frames * keep) * (1 - temp)))
        hi = min(frames, int((frames * keep) * (1 + temp)))
        counts = [max(c, 1) for c in rescale(counts, lo, hi)]
        for kv, c in zip(self.kv, counts):
            kv.compress(frames + 1, c)
        return counts

    def encode_video(self, features):
        """Semantic mode: the online segmentation over the frames' features, each segment encoded in turn."""
        segments = segment(features, self.s["min_segment_size"], self.s["max_segment_size"], self.s["theta"])
        for seg in segments:
            seg["kept"] = self.encode_segment(seg["features"])
        return segments

    # -------------------------------------------------------------- question answering
    def question_answering(self, input_text, max_new_tokens):
        """Probe pass, layer-adaptive allocation, second pass, then the answer prompt and greedy decoding
        over [init | retrieved]. Returns ids, each layer's blocks (stream ordinals), first-token logits
        and the allocation."""
        caches = [None] * len(self.layers)

        def retrieval(i, q, k, v):
            past = self.kv[i].retrieved_kv(q)
            out, caches[i] = tuple_attention(self.rope, q, k, v, past, self.n_init, NO_WINDOW, keep=False)
            return out

        question = self.embed(torch.tensor(self.ids(input_text["question"])))
        for kv in self.kv:
            kv.probing = True
        self.run_layers(question, retrieval)
        r, t = self.s["retrieve_size"], self.s["retrieve_temp"]
        counts = rescale(cdf_counts([kv.score for kv in self.kv], len(self.kv) * r),
                         max(r * (1 - t), 1), min(r * (1 + t), self.s["max_per_layer"]))
        for kv, c in zip(self.kv, counts):
            kv.probing, kv.count = False, c
        self.run_layers(question, retrieval)
        retrieved = [[kv.origin[b] for b in kv.retrieved] for kv in self.kv]
        output_ids, first = self.greedy(caches, input_text["prompt"], max_new_tokens, NO_WINDOW)
        return output_ids, retrieved, first, counts

    def answer(self, features, question, end_time, candidates):
        """analyze_a_video for one multiple-choice question: a fresh memory from frame 0 to int(end_time·fps)."""
        end = int((torch.tensor([0, end_time]) * self.sample_fps).tolist()[-1])
        self.clear_cache()
        self.encode_init_prompt()
        segments = self.encode_video(features[:end])
        ids, retrieved, first, allocation = self.question_answering(format_mcqa_prompt(question, candidates), 16)
        local_mattered = any(sorted(kv.retrieved) != kv.plain_top for kv in self.kv)
        return {"frames": end, "ids": ids, "retrieved": retrieved, "logits": first, "allocation": allocation,
                "segments": segments, "local_mattered": local_mattered,
                "stored": [list(kv.origin) for kv in self.kv]}


def svqa_ids(stored):
    """Stream ordinal → the bank id svqa gives that block: svqa stores a segment's frame blocks that some
    layer keeps, then its summary, numbered from 0 in that order (a frame no layer keeps has no id)."""
    kept = sorted(set(o for layer in stored for o in layer))
    return {o: i for i, o in enumerate(kept)}
