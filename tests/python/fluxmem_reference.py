"""FluxMem's streaming memory transcribed from its reference implementation (YiwengXie/FluxMem @ 6fdbf65,
models/qwen2-5-vl/src/qwen2_5_vl_fluxmem/fluxmem.py `FluxMem.process_memory_streaming` and the helpers it
calls, utils.py `scan_visual_indices`), in its own layout: one sequence of hidden states whose video tokens
sit between <|vision_start|> and <|vision_end|>, frames told apart by their temporal position id and
placed on the grid by their height and width ids (Qwen2.5-VL's mRoPE position_ids [3, 1, L]).

    python fluxmem_reference.py DIR

Reads DIR/settings.json (short_term_frames, mid_term_frames, direct_drop_sim_threshold, prefix, suffix), DIR/frames.npy [G, n, dim] and DIR/rows.npy, DIR/cols.npy [n]
(each token's grid cell), lays them out as the model would (`prefix` text tokens and <|vision_start|>,
the G frames at t = 4·g, `suffix` text tokens after <|vision_end|>), runs the memory and writes
DIR/kept_<g>.npy (frame g's kept tokens, indices into the frame) and DIR/tokens_<g>.npy (their hidden
states after merging), and DIR/sequence_kept.npy (kept indices into the whole sequence).
"""

import json
import pathlib
import sys

import numpy as np
import torch
import torch.nn.functional as F

VISION_START, VISION_END = 151652, 151653
OFFSETS_3X3 = [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 0), (0, 1), (1, -1), (1, 0), (1, 1)]
OFFSETS_NEIGHBOUR = [o for o in OFFSETS_3X3 if o != (0, 0)]


def visual_indices(ids, start_id, end_id):  # utils.py scan_visual_indices: strictly between each start/end pair
    starts = (ids == start_id).nonzero(as_tuple=True)[0].tolist()
    ends = (ids == end_id).nonzero(as_tuple=True)[0].tolist()
    out = [i for s, e in zip(starts, ends) if e - s > 1 for i in range(s + 1, e)]
    return torch.tensor(out, dtype=torch.long)


def otsu(values, nbins=128, fallback_to_median=False):
    if values.numel() == 0:
        return None
    v = values.detach().float().clamp(0.0, 2.0)
    if fallback_to_median and float(v.var().item()) <= 1e-12:
        return float(torch.median(v).item())
    hist = torch.histc(v, bins=nbins, min=0.0, max=2.0)
    total = float(hist.sum().item())
    if total <= 0:
        return float(torch.median(v).item()) if fallback_to_median else None
    p = hist / total
    step = 2.0 / nbins
    centers = (torch.arange(nbins, dtype=torch.float32) + 0.5) * step
    omega = torch.cumsum(p, 0)
    mu_k = torch.cumsum(p * centers, 0)
    sigma = (mu_k[-1] * omega - mu_k) ** 2 / (omega * (1.0 - omega)).clamp_min(1e-12)
    sigma[omega < 1e-6] = -1
    sigma[(1.0 - omega) < 1e-6] = -1
    k = int(torch.argmax(sigma).item())
    if float(sigma[k].item()) <= 0.0:
        return float(torch.median(v).item()) if fallback_to_median else None
    return float((k + 0.5) * step)


class Memory:
    """One sample's state inside process_memory_streaming."""

    def __init__(self, hidden, position_ids, ids, short_term_frames, mid_term_frames, drop_sim,
                 vision_ids=(VISION_START, VISION_END)):
        self.hidden = hidden  # [L, dim], merged in place
        self.vis = visual_indices(ids, *vision_ids)
        self.t, self.h, self.w = position_ids[0], position_ids[1].long(), position_ids[2].long()
        self.grid_hw = (int(self.h[self.vis].max()) + 1, int(self.w[self.vis].max()) + 1)
        self.frames = [int(f) for f in torch.unique(self.t[self.vis], sorted=True).tolist()]
        self.indices, self.grids = {}, {}
        for f in self.frames:  # _frame_grids
            idx = self.vis[self.t[self.vis] == f]
            grid = torch.full(self.grid_hw, -1, dtype=torch.long)
            grid[self.h[idx], self.w[idx]] = idx
            padded = torch.full((self.grid_hw[0] + 2, self.grid_hw[1] + 2), -1, dtype=torch.long)
            padded[1:-1, 1:-1] = grid
            self.indices[f], self.grids[f] = idx, padded
        self.norm = F.normalize(hidden, p=2, dim=1, eps=1e-8)
        self.pair = torch.full((hidden.shape[0],), -1.0, dtype=hidden.dtype)
        self.keep = torch.ones(hidden.shape[0], dtype=torch.bool)
        self.keep[self.vis] = False
        self.short_grids = int(short_term_frames / 2)  # temporal_patch_size 2
        self.mid_limit = int(mid_term_frames / 2)
        self.drop_sim = float(drop_sim)

    def max_sim(self, query, neighbour_frame):  # _max_sim_against_frames with one neighbour frame
        off = torch.tensor(OFFSETS_3X3, dtype=torch.long)
        nh = (self.h[query] + 1).view(-1, 1) + off[:, 0].view(1, -1)
        nw = (self.w[query] + 1).view(-1, 1) + off[:, 1].view(1, -1)
        mat = self.grids[neighbour_frame][nh, nw]
        valid = mat >= 0
        has = valid.any(dim=1)
        if not bool(has.any()):
            raise RuntimeError("No neighbors found for window/pair matching")
        q, mat, valid = query[has], mat[has], valid[has]
        sims = (self.norm[mat.clamp_min(0)] * self.norm[q].unsqueeze(1)).sum(dim=2)
        best = sims.masked_fill(~valid, float("-inf")).max(dim=1).values
        return q, best, 1.0 - best, has

    def threshold(self, values):  # pair_sim_threshold None (every released script): Otsu
        t = otsu(values, fallback_to_median=True)
        if t is None:
            raise RuntimeError("Empty set for Otsu thresholding")
        return t

    def prune(self, frame, next_frame):  # _apply_adjacent_pruning
        query = self.indices[frame]
        q, best, dist, has = self.max_sim(query, next_frame)
        self.keep[query[~has]] = True
        keep = dist >= self.threshold(dist)
        prev = self.pair[query]
        if bool((prev >= 0).any()):
            keep = keep | (self.pair[q] >= self.threshold(prev[prev >= 0]))
        if q.numel() > 0:
            keep = keep & ~(best > self.drop_sim)
        self.keep[q[keep]] = True

    def merge(self, frame):  # _long_term_memory_merge_per_frames for one frame
        idx = self.vis[self.t[self.vis] == frame]
        kept = idx[self.keep[idx]]
        n = int(kept.numel())
        if n <= 1:
            return
        padded = torch.full((self.grid_hw[0] + 2, self.grid_hw[1] + 2), -1, dtype=torch.long)
        nodes = torch.arange(n)
        gh, gw = self.h[kept] + 1, self.w[kept] + 1
        padded[gh, gw] = nodes
        off = torch.tensor(OFFSETS_NEIGHBOUR, dtype=torch.long)
        mat = padded[gh.view(-1, 1) + off[:, 0].view(1, -1), gw.view(-1, 1) + off[:, 1].view(1, -1)]
        src = nodes.unsqueeze(1).expand_as(mat)
        upper = (mat >= 0) & (mat > src)
        if not bool(upper.any()):
            return
        ei, ej = src[upper], mat[upper]
        fn = self.norm[kept] if self.norm.dtype == torch.float32 else F.normalize(self.hidden[kept].float(), p=2, dim=1, eps=1e-8)
        d = (1.0 - (fn[ei] * fn[ej]).sum(dim=1)).clamp(0.0, 2.0)
        tau = otsu(d)
        if tau is None:
            return
        sel = d <= tau
        if not bool(sel.any()):
            return
        ei, ej = ei[sel], ej[sel]
        labels = torch.arange(n)
        for _ in range(max(1, n)):  # min-label propagation with pointer jumping
            low = torch.minimum(labels[ei], labels[ej])
            new = labels.clone()
            new.scatter_reduce_(0, ei, low, reduce="amin", include_self=True)
            new.scatter_reduce_(0, ej, low, reduce="amin", include_self=True)
            new = new[new]
            if torch.equal(new, labels):
                break
            labels = new
        _, inverse = torch.unique(labels, return_inverse=True)
        c = int(inverse.max()) + 1
        x = self.hidden[kept].float()
        mean = torch.zeros((c, x.size(1))).index_add_(0, inverse, x)
        counts = torch.zeros(c).index_add_(0, inverse, torch.ones(n)).clamp_min(1.0)
        mean = mean / counts.unsqueeze(1)
        sq = (x - mean[inverse]).pow(2).sum(dim=1)
        least = torch.full((c,), float("inf")).scatter_reduce_(0, inverse, sq, reduce="amin", include_self=True)
        cand = torch.nonzero(sq == least[inverse], as_tuple=True)[0]
        anchor = torch.full((c,), n, dtype=torch.long).scatter_reduce_(0, inverse[cand], cand, reduce="amin",
                                                                        include_self=True)
        merged = counts > 1.0
        if not bool(merged.any()):
            return
        anchor = anchor[merged]
        self.hidden[kept[anchor]] = mean[merged].to(self.hidden.dtype)
        local = torch.ones(n, dtype=torch.bool)
        local[merged[inverse]] = False
        local[anchor] = True
        self.keep[kept[~local]] = False

    def run(self):
        short, mid = [], []
        for i, frame in enumerate(self.frames):
            short.append(frame)
            if i > 0:
                q, _, dist, _ = self.max_sim(self.indices[frame], self.frames[i - 1])
                if q.numel() > 0:
                    self.pair[q] = dist
            if len(short) > max(1, self.short_grids):
                evicted = short.pop(0)
                self.prune(evicted, short[0])
                mid.append(evicted)
                if len(mid) > max(0, self.mid_limit):
                    self.merge(mid.pop(0))
        for frame in short:
            self.keep[self.indices[frame]] = True
        return self.keep.nonzero(as_tuple=True)[0]


def layout(frames, rows, cols, prefix, suffix, dtype=torch.float32, seed=0):
    """The model's sequence: `prefix` text tokens and <|vision_start|>, the frames (temporal patch g at
    t = 4·g: 2 frames a patch, tokens_per_second 2, 1 fps), <|vision_end|> and `suffix` text tokens."""
    g, n, dim = frames.shape
    gen = torch.Generator().manual_seed(seed)
    text = lambda k: torch.randn(k, dim, generator=gen)  # noqa: E731
    hidden = torch.cat([text(prefix + 1), frames.reshape(g * n, dim), text(suffix + 1)]).to(dtype)
    ids = torch.cat([torch.full((prefix,), 7), torch.tensor([VISION_START]), torch.full((g * n,), 151656),
                     torch.tensor([VISION_END]), torch.full((suffix,), 9)])
    base = prefix + 1
    text_pos = torch.arange(base).repeat(3, 1)
    grid = torch.stack([torch.arange(g).repeat_interleave(n) * 4, rows.repeat(g), cols.repeat(g)]) + base
    start = int(grid.max()) + 1
    after = torch.arange(start, start + suffix + 1).repeat(3, 1)
    return hidden, torch.cat([text_pos, grid, after], dim=1), ids, base


def main(out):
    s = json.loads((out / "settings.json").read_text())
    frames = torch.from_numpy(np.load(out / "frames.npy"))
    rows, cols = (torch.from_numpy(np.load(out / f"{k}.npy")) for k in ("rows", "cols"))
    hidden, pos, ids, base = layout(frames, rows, cols, s["prefix"], s["suffix"])
    memory = Memory(hidden, pos, ids, s["short_term_frames"], s["mid_term_frames"], s["direct_drop_sim_threshold"])
    kept = memory.run()
    np.save(out / "sequence_kept.npy", kept.numpy())
    g, n, _ = frames.shape
    for f in range(g):
        first = base + f * n
        local = kept[(kept >= first) & (kept < first + n)]
        np.save(out / f"kept_{f}.npy", (local - first).numpy())
        np.save(out / f"tokens_{f}.npy", memory.hidden[local].numpy())


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]))
