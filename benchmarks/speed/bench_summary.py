"""The speed harness's figures from svqa_bench's JSON (bench.py runs it): encode seconds per frame
against the matmul floor in each window regime, time to first token against Hugging Face's
re-prefill, memory, host work per phase, and the comparisons of --mukv and --against."""


def summarise(measured, hf):
    frames = measured["frames"]  # one row per visual unit (2 frames on Qwen2.5-VL)
    unit = measured["shape"]["frames_per_unit"]
    encode = {}
    for regime, full in (("window_filling", False), ("window_full", True)):
        rows = [f for f in frames if f["window_full"] == full]
        if not rows:
            continue
        seconds = sum(f["encode_s"] for f in rows)
        floor = sum(f["floor_s"] for f in rows)
        flops = sum(f["flops"] for f in rows)
        n = len(rows) * unit
        vision = sum(f["vision_s"] for f in rows)
        encode[regime] = {"frames": n, "s_per_frame": seconds / n, "floor_s_per_frame": floor / n,
                          "x_floor": seconds / floor, "vision_s_per_frame": vision / n,
                          "vision_floor_s_per_frame": measured["vision_floor_s"] / unit,
                          "vision_x_floor": vision / len(rows) / measured["vision_floor_s"],
                          "gflops_per_frame": flops / n / 1e9,
                          "x_peak": seconds / (flops / measured["peak_flops_per_s"])}
    ttft = []
    for q in measured["questions"]:
        row = {k: q[k] for k in ("after_frames", "retrieve_s", "gather_s", "prefill_s", "ttft_s", "context_tokens")}
        row["gather_share"] = q["gather_s"] / q["ttft_s"]
        row["floor_s"] = q.get("floor_s")  # the retrieval pass's and the prefill's matmuls at this machine's rate
        row["x_floor"] = q["ttft_s"] / q["floor_s"] if q.get("floor_s") else None
        hf_s = hf.get(q["after_frames"])
        row["hf_reprefill_s"] = hf_s
        row["x_hf"] = q["ttft_s"] / hf_s if hf_s else None
        row["floor_x_hf"] = q["floor_s"] / hf_s if hf_s and q.get("floor_s") else None  # the best TTFT/HF can be
        # TTFT/HF if both sides ran at one FLOP rate: the arithmetic of ReKV's answering against a re-prefill's
        row["flops_x_hf"] = q["flops"] / q["hf_flops"] if q.get("hf_flops") else None
        row["hf_gflops_per_s"] = q["hf_flops"] / hf_s / 1e9 if hf_s and q.get("hf_flops") else None
        row["peak_x_hf"] = q["flops"] / measured["peak_flops_per_s"] / hf_s if hf_s and q.get("flops") else None
        ttft.append(row)
    mem = measured["memory"]
    bank_frames = len(frames) * unit
    per_frame = mem["bank_bytes"] / bank_frames
    memory = {"rss_loaded": mem["rss_loaded"], "peak_rss": mem["peak_rss"],
              "peak_minus_loaded": mem["peak_rss"] - mem["rss_loaded"], "bank_bytes": mem["bank_bytes"],
              "window_bytes": mem["window_bytes"], "bank_bytes_per_frame": per_frame,
              "x_bank_and_window": (mem["peak_rss"] - mem["rss_loaded"]) / (mem["bank_bytes"] + mem["window_bytes"]),
              "kv_gb_per_hour_at_0.5fps": per_frame * 1800 / 1e9, "peak_counts_from": mem["peak_counts_from"],
              "weights_bytes": mem["weights_bytes"],
              "x_weights_bank_and_window": mem["peak_rss"] / (mem["weights_bytes"] + mem["bank_bytes"] + mem["window_bytes"])}
    if "vision_memory" in measured:  # N frames in one call against 1 unit plus the added units' features
        vm = measured["vision_memory"]
        counts = sorted((k for k in vm if k.isdigit()), key=int)
        one, many = vm[counts[0]], vm[counts[-1]]
        extra_features = many["feature_bytes"] - one["feature_bytes"]
        memory["vision"] = {**vm, "frames": int(counts[-1]),
                            "x_one_plus_features": many["peak_above_before"] / (one["peak_above_before"] + extra_features)}
    by_ttft = {r["after_frames"]: r["ttft_s"] for r in ttft}
    return {"encode": encode, "ttft": ttft, "memory": memory, "ttft_growth": by_ttft, "host_work": host_work(measured)}


def host_work(measured):
    """ATen operator calls and host synchronisations (calls that wait for the device on a GPU) per
    encoded frame, by phase and window regime (the mean over the regime's frames), and per question."""
    unit = measured["shape"]["frames_per_unit"]
    per_frame = {}
    for regime, full in (("window_filling", False), ("window_full", True)):
        rows = [f["counts"] for f in measured["frames"] if f.get("window_full", False) == full and "counts" in f]
        if rows:
            per_frame[regime] = {kind: {phase: sum(r[kind][phase] for r in rows) / len(rows) / unit
                                        for phase in rows[0][kind]} for kind in ("ops", "syncs")}
    per_question = [{"after_frames": q["after_frames"], **q["counts"]} for q in measured["questions"] if "counts" in q]
    return {"per_frame": per_frame, "per_question": per_question}


def method_figures(measured):
    """Encode rate and memory of one method's stream, memory scaled to 300 frames (MuKV's figure)."""
    frames, last = measured["frames"], measured["questions"][-1]
    n = len(frames)
    return {"encode_frames_per_s": n / sum(f["vision_s"] + f["encode_s"] for f in frames),
            "llm_frames_per_s": n / sum(f["encode_s"] for f in frames),
            "memory_tokens_per_300_frames": measured["memory"]["bank_tokens"] * 300 / n,
            "bank_bytes_per_300_frames": measured["memory"]["bank_bytes"] * 300 / n,
            "context_tokens": last["context_tokens"], "ttft_s": last["ttft_s"]}


def compare_mukv(rekv, mukv):
    a, b = method_figures(rekv), method_figures(mukv)
    return {"rekv": a, "mukv": b, "mukv_over_rekv": {k: b[k] / a[k] for k in a}, "measured": mukv}


def rss_over_time(measured):
    samples = measured["memory"]["samples"]
    at_10min = next((s["rss"] for s in samples if s["stream_s"] >= 600), None)
    peak = max(s["rss"] for s in samples)
    return {"samples": samples, "rss_at_10min": at_10min, "peak_sampled_rss": peak,
            "peak_over_10min": peak / at_10min if at_10min else None}


def phase_figures(measured):
    """The per-phase seconds --against compares, from svqa_bench's JSON alone (an older revision's has
    fewer fields): encode and vision per frame in each window regime, each question's retrieve /
    gather / prefill / TTFT. A revision whose svqa_bench timed frames, not visual units (e5410d4: no
    frames_per_unit in its JSON), counts one frame per unit."""
    unit = measured["shape"].get("frames_per_unit", 1)
    out = {}
    for regime, full in (("window filling", False), ("window full", True)):
        rows = [f for f in measured["frames"] if f.get("window_full", False) == full]
        if rows:
            out[f"encode s/frame, {regime}"] = sum(f["encode_s"] for f in rows) / len(rows) / unit
            out[f"vision s/frame, {regime}"] = sum(f["vision_s"] for f in rows) / len(rows) / unit
    for q in measured["questions"]:
        for key in ("retrieve_s", "gather_s", "prefill_s", "ttft_s"):
            out[f"{key[:-2]} s after {q['after_frames']} frames"] = q[key]
    return out


def compare_against(rev, theirs, ours):
    a, b = phase_figures(theirs), phase_figures(ours)
    return {"rev": rev, "theirs": a, "ours": b, "ours_over_theirs": {k: b[k] / a[k] for k in a if k in b and a[k] > 0}}
