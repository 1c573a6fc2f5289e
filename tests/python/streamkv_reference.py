"""Python transcriptions of StreamKV's reference rules (sou1p0wer/StreamKV @ b0dbe3f,
model/abstract_streamkv.py: the online segmentation of `encode_video` with `merge`, and the
layer-adaptive budget `obtain_cdf_num` + `rescale_sum_match`), for tests/test_streamkv_rules.cpp.

    python tests/python/streamkv_reference.py segmentation --cases 120 --seed 0
    python tests/python/streamkv_reference.py budget --cases 150 --seed 0

print one JSON object: random inputs and what the reference rules make of them. Two guards the
reference code lacks, which the C++ port has too: a layer with one candidate or equal scores gets a
uniform softmax (the reference code divides by std = 0 or NaN), and ties in the sum-fixing pass go in
layer order (numpy's default argsort is not stable).
"""

import argparse
import json

import numpy as np
import torch
import torch.nn.functional as F


# ---------------------------------------------------------------- segmentation

def frame_cosine(a, b):
    """Cosine of two frames' token means, with 1e-8 added to the product of norms."""
    am, bm = a.mean(dim=0), b.mean(dim=0)
    return float(torch.dot(am, bm) / (torch.norm(am) * torch.norm(bm) + 1e-8))


def merge_pair(entries, members, sims, merges):
    """Average the adjacent pair with the highest similarity; recompute its neighbours' similarities."""
    if not sims:
        return sims
    i = int(torch.argmax(torch.tensor(sims)).item())
    merged = (entries[i] + entries[i + 1]) / 2.0
    entries[i] = merged
    del entries[i + 1]
    members[i] = members[i] + members[i + 1]
    del members[i + 1]
    out = list(sims)
    if i > 0:
        out[i - 1] = frame_cosine(entries[i - 1], merged)
    if i + 1 < len(out):
        out[i] = frame_cosine(merged, entries[i + 1])
        del out[i + 1]
    else:
        del out[i]
    merges.append(i)
    return out


def segment(frames, m, big_m, theta):
    """The online rule over a list of [tokens, D] tensors → segments: entries (unit ids), merges, and
    the entries' features (merged ones averaged)."""
    done = []
    entries, members, sims, merges, count, previous = [], [], [], [], 0, None

    def close():
        done.append({"entries": [list(x) for x in members], "merges": list(merges),
                     "feature_sums": [float(e.sum()) for e in entries], "features": list(entries)})

    for t, frame in enumerate(frames):
        if not entries:
            entries, members, count, previous = [frame], [[t]], 1, frame
            continue
        s = frame_cosine(frame, previous)
        sims.append(s)
        if count < m or s > theta:
            entries.append(frame)
            members.append([t])
            if count >= big_m:
                sims = merge_pair(entries, members, sims, merges)
            else:
                count += 1
            previous = frame
        else:
            close()
            entries, members, sims, merges, count, previous = [frame], [[t]], [], [], 1, frame
    if entries:
        close()
    return done


def segmentation_cases(n_cases, seed):
    rng = np.random.default_rng(seed)
    cases = []
    for _ in range(n_cases):
        n, tokens, dim = int(rng.integers(15, 60)), 3, 6
        m = int(rng.integers(1, 5))
        big_m = m + int(rng.integers(0, 6))
        theta = float(rng.uniform(0.85, 0.99))
        base = rng.standard_normal(dim)
        frames = []
        for _ in range(n):
            if rng.random() < 0.12:
                base = rng.standard_normal(dim)  # a new scene
            else:
                base = base + rng.uniform(0.0, 0.35) * rng.standard_normal(dim)
            frames.append(base + 0.2 * rng.standard_normal((tokens, dim)))
        tensors = [torch.tensor(f, dtype=torch.float64) for f in frames]
        segments = [{k: v for k, v in s.items() if k != "features"} for s in segment(tensors, m, big_m, theta)]
        cases.append({"min": m, "max": big_m, "theta": theta, "frames": [f.tolist() for f in frames],
                      "segments": segments})
    return cases


# ---------------------------------------------------------------- layer-adaptive budget

def cdf_counts(scores, target):
    """obtain_cdf_num: z-scored softmax per layer, cumulative mass, bisection on the threshold."""
    cumulative = []
    for s in scores:
        if s.numel() == 1 or float(torch.std(s)) == 0.0:
            p = torch.full((s.numel(),), 1.0 / s.numel(), dtype=torch.float32)
        else:
            p = F.softmax((s - torch.mean(s)) / torch.std(s), dim=0)
        cumulative.append(p.sort(descending=True)[0].cumsum(dim=0))
    width = max(c.numel() for c in cumulative)
    padded = torch.stack([torch.cat([c, torch.full((width - c.numel(),), float("inf"))]) for c in cumulative])
    layers = padded.size(0)
    lo, hi, mid = 0.0, 1.0, 0.0
    while hi - lo > 1e-6:
        mid = (lo + hi) / 2.0
        pos = torch.searchsorted(padded, torch.full((layers, 1), mid, dtype=torch.float32), right=False).clamp(min=1)
        count = int(pos.sum().item())
        if abs(count - target) < 5:
            break
        if count > target:
            hi = mid
        else:
            lo = mid
    pos = torch.searchsorted(padded, torch.full((layers, 1), mid, dtype=torch.float32), right=False).clamp(min=1)
    return pos.view(-1).tolist()


def rescale(counts, new_min, new_max):
    """rescale_sum_match, ties in layer order."""
    arr = np.array(counts, dtype=float)
    total = arr.sum()
    lo, hi = arr.min(), arr.max()
    if lo == hi:
        return arr.astype(int).tolist()
    scaled = (arr - lo) / (hi - lo) * (new_max - new_min) + new_min
    mapped = np.clip(np.round(scaled * (total / scaled.sum())), new_min, new_max)
    diff = int(round(total - mapped.sum()))
    if diff != 0:
        order = np.argsort(mapped, kind="stable") if diff > 0 else np.argsort(-mapped, kind="stable")
        for i in order:
            if (diff > 0 and mapped[i] < new_max) or (diff < 0 and mapped[i] > new_min):
                mapped[i] += 1 if diff > 0 else -1
                diff += -1 if diff > 0 else 1
                if diff == 0:
                    break
    return mapped.astype(np.int32).tolist()


def budget_cases(n_cases, seed):
    rng = np.random.default_rng(seed)
    cases = []
    for c in range(n_cases):
        layers = int(rng.integers(1, 30))
        kind = c % 5  # 0: one candidate per layer, 1: equal scores in some layers, else random
        scores = []
        for _ in range(layers):
            n = 1 if kind == 0 else int(rng.integers(1, 80))
            if kind == 1 and rng.random() < 0.5:
                s = np.full(n, float(rng.standard_normal()))
            else:
                s = rng.standard_normal(n) * float(rng.uniform(0.1, 30.0))
            scores.append(torch.tensor(s, dtype=torch.float32))
        total = sum(s.numel() for s in scores)
        target = int(rng.integers(layers, total + 1))
        counts = cdf_counts(scores, target)
        if rng.random() < 0.5:  # retrieval-style float bounds
            size = int(rng.integers(1, 80))
            temp = float(rng.choice([0.0, 0.3, 0.5, 1.0]))
            new_min, new_max = max(size * (1 - temp), 1), min(size * (1 + temp), 128)
        else:  # compression-style integer bounds
            frames, ratio, temp = int(rng.integers(1, 65)), float(rng.uniform(0.1, 1.0)), float(rng.choice([0.0, 1.0]))
            new_min = max(1, int((frames * ratio) * (1 - temp)))
            new_max = min(frames, int((frames * ratio) * (1 + temp)))
        cases.append({"scores": [s.tolist() for s in scores], "target": target, "counts": counts,
                      "lo": new_min, "hi": new_max, "rescaled": rescale(counts, new_min, new_max)})
    return cases


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("rule", choices=["segmentation", "budget"])
    parser.add_argument("--cases", type=int, default=120)
    parser.add_argument("--seed", type=int, default=0)
    a = parser.parse_args()
    make = segmentation_cases if a.rule == "segmentation" else budget_cases
    print(json.dumps({"cases": make(a.cases, a.seed)}))


if __name__ == "__main__":
    main()
