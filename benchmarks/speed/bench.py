"""svqa speed harness: .venv/bin/python benchmarks/speed/bench.py [--quick] [--long] [--json]

Makes its own tiny-but-real-shaped LLaVA-OneVision export (random weights; LLM hidden 512, 8
layers, 8 heads, 2 kv heads, MLP 1408; a tiny SigLIP tower at 384 px giving the real 196 tokens
per frame), runs build/bin/svqa_bench on a synthetic stream (ReKV encoding, internal retrieval),
times Hugging Face re-prefill of the whole past on the same weights (the export's hf/ model), and
prints one table: encode s/frame against the matmul floor in both window regimes, time to first
token split into retrieve / gather / prefill, memory. `--json` prints everything as JSON instead.

  --quick  a smoke run (small model, a dozen frames) that CI runs: every field, no meaning
  --long   a 1-hour stream at 0.5 fps (1,800 frames) with the disk tier: RSS over time
  --mukv   also MuKV (its paper configuration) on the same export and stream: encode frames/s and
           memory tokens per 300 frames, MuKV vs ReKV
  --against REV
           also build REV's svqa_bench (a git worktree under BUILD/against/, its own build folder;
           ccache makes a rebuild cheap) and run it on the same export and stream in the same run, just
           before this tree's, then print REV's figures, this tree's and their ratio per phase
  --shape llava-ov-0.5b|qwen2.5-vl-3b
           a random-weight checkpoint with the real config (every layer, the real 151,936-token
           vocabulary) exported as a user's would be; with --quick, real widths at 2 text and 2 vision
           layers and 4 frames (CI). Vision and LLM each against their own matmul floor, vision memory
"""

import argparse
import hashlib
import json
import os
import pathlib
import platform
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]

# LLaVA-OV's Qwen2 at a small width and real proportions; SigLIP patch 14 on 384 px → 27×27 →
# pooled 14×14 = 196 tokens per frame, as the real model.
REAL_SHAPE = {
    "text_config.hidden_size": 512, "text_config.num_hidden_layers": 8, "text_config.num_attention_heads": 8,
    "text_config.num_key_value_heads": 2, "text_config.head_dim": 64, "text_config.intermediate_size": 1408,
    "text_config.max_position_embeddings": 131072, "vision_config.image_size": 384, "vision_config.patch_size": 14,
}
QUICK_SHAPE = {**REAL_SHAPE, "text_config.hidden_size": 128, "text_config.num_hidden_layers": 2,
               "text_config.num_attention_heads": 4, "text_config.head_dim": 32, "text_config.intermediate_size": 352}

# Stream settings per mode: ReKV's defaults (n_local 15000, r 64) on the real shape.
MODES = {
    "full": dict(shape=REAL_SHAPE, frames=256, n_local=15000, retrieve=64, questions=[16, 64, 256],
                 hf_frames=[16, 64, 256], ttft_repeats=3, rss_every=16),
    "quick": dict(shape=QUICK_SHAPE, frames=12, n_local=1000, retrieve=4, questions=[4, 8, 12],
                  hf_frames=[4, 8], ttft_repeats=1, rss_every=4),
    "long": dict(shape=REAL_SHAPE, frames=1800, n_local=15000, retrieve=64, questions=[64, 1800],
                 hf_frames=[], ttft_repeats=1, rss_every=30, ram_budget_mb=256),
}
# Real shapes: fewer frames (a frame is ~1 TFLOP on the CPU), the vision tower's memory on 16 frames.
SHAPE_MODES = {
    "full": dict(frames=32, n_local=15000, retrieve=64, questions=[8, 32], hf_frames=[8, 32], ttft_repeats=1,
                 rss_every=8, vision_memory=16),
    "quick": dict(frames=4, n_local=15000, retrieve=4, questions=[2, 4], hf_frames=[2], ttft_repeats=1,
                  rss_every=2, vision_memory=4),
}
SHAPES = {"llava-ov-0.5b": "llava_onevision", "qwen2.5-vl-3b": "qwen2_5_vl"}
HF_BUDGET_S = 300  # Hugging Face re-prefill at the last point only if its estimate fits


def load_average():
    return [round(x, 2) for x in os.getloadavg()]


def make_export(shape, out, dtype=None):
    """The export for `shape`, traced in `dtype` (a trace computes in the dtype it was traced in), made
    once and reused while its settings are unchanged."""
    settings = json.dumps({**shape, "dtype": dtype or "float32"}, sort_keys=True)
    stamp = out / "bench_settings.json"
    if (out / "manifest.json").exists() and stamp.exists() and stamp.read_text() == settings:
        return out
    cmd = [sys.executable, "-m", "models.export", "--tiny", "llava_onevision", "--seed", "0", "--out", str(out),
           "--dtype", dtype or "float32"]
    for key, value in shape.items():
        cmd += ["--tiny-set", f"{key}={value}"]
    print(f"making the export in {out} ...", file=sys.stderr)
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    stamp.write_text(settings)
    return out


def make_shape_export(name, full_depth, out, dtype=None):
    """The export of a random-weight checkpoint with `name`'s real config, and that checkpoint (kept
    beside it for Hugging Face's re-prefill); made once and reused."""
    checkpoint = out.parent / f"{out.name}-hf"
    if (out / "manifest.json").exists() and (checkpoint / "config.json").exists():
        return out, checkpoint
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(checkpoint, ignore_errors=True)
    print(f"making the {name} checkpoint and export in {out} ...", file=sys.stderr)
    make = ("import pathlib, sys; from models.export.real_checkpoints import make_checkpoint; "
            "make_checkpoint(sys.argv[1], pathlib.Path(sys.argv[2]), full_depth=sys.argv[3] == '1')")
    subprocess.run([sys.executable, "-c", make, SHAPES[name], str(checkpoint), "1" if full_depth else "0"],
                   cwd=ROOT, check=True)
    subprocess.run([sys.executable, "-m", "models.export", "--model", str(checkpoint), "--out", str(out),
                    "--dtype", dtype or "float32"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return out, checkpoint


def run_svqa_bench(binary, export, mode, threads, spill_dir, method="rekv", device="cpu", dtype=None):
    with tempfile.NamedTemporaryFile(suffix=".json") as result:
        cmd = [str(binary), "--export", str(export), "--method", method, "--threads", str(threads), "--frames", str(mode["frames"]),
               "--n-local", str(mode["n_local"]), "--retrieve", str(mode["retrieve"]),
               "--questions", ",".join(map(str, mode["questions"])), "--ttft-repeats", str(mode["ttft_repeats"]),
               "--rss-every", str(mode["rss_every"]), "--json", result.name]
        if "ram_budget_mb" in mode:
            cmd += ["--ram-budget-mb", str(mode["ram_budget_mb"]), "--spill-dir", str(spill_dir)]
        cmd += ["--device", device] + (["--dtype", dtype] if dtype else [])
        if method != "rekv":
            cmd += ["--no-floor"]  # the floor models ReKV's window
        subprocess.run(cmd, cwd=ROOT, check=True)
        measured = json.loads(pathlib.Path(result.name).read_text())
        if mode.get("vision_memory"):  # in a process of its own: the stream's heap would hide it
            subprocess.run(cmd + ["--vision-memory", str(mode["vision_memory"])], cwd=ROOT, check=True)
            measured.update(json.loads(pathlib.Path(result.name).read_text()))
        return measured


def hf_reprefill(checkpoint, measured, frames_list, threads, repeats, device="cpu", dtype=None):
    """Seconds for Hugging Face to prefill the whole past (sinks, every frame's tokens, the answer
    prompt) from scratch and give the first token: the language model on input embeddings, the
    vision tower left out (its cost is the same either way)."""
    import torch
    import transformers

    torch.set_num_threads(threads)
    architecture = json.loads((checkpoint / "config.json").read_text())["model_type"]
    cls = (transformers.Qwen2_5_VLForConditionalGeneration if architecture == "qwen2_5_vl"
           else transformers.LlavaOnevisionForConditionalGeneration)
    model = cls.from_pretrained(checkpoint).eval()
    torch_dtype = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}[dtype or "float32"]
    model = model.to(device=device, dtype=torch_dtype)
    lm, head = model.model.language_model, model.lm_head

    def sync():
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    shape = measured["shape"]
    reprefill_tokens = {q["after_frames"]: q["reprefill_tokens"] for q in measured["questions"]}
    out = {}
    with torch.inference_mode():
        lm(inputs_embeds=torch.randn(1, 64, shape["hidden"], device=device, dtype=torch_dtype), use_cache=False)  # warm-up
        for i, frames in enumerate(frames_list):
            if i and i == len(frames_list) - 1 and out:
                prev = frames_list[i - 1]
                estimate = out[prev] * (frames / prev) ** 2 * 0.8
                if estimate > HF_BUDGET_S:
                    print(f"skipping HF re-prefill after {frames} frames (estimated {estimate:.0f} s)", file=sys.stderr)
                    continue
            length = reprefill_tokens[frames]
            x = torch.randn(1, length, shape["hidden"], device=device, dtype=torch_dtype)
            best = float("inf")
            try:
                for _ in range(repeats if length < 20000 else 1):
                    sync()
                    t0 = time.perf_counter()
                    h = lm(inputs_embeds=x, use_cache=False).last_hidden_state
                    head(h[:, -1]).argmax(-1).tolist()  # waits for the device
                    best = min(best, time.perf_counter() - t0)
            except torch.OutOfMemoryError:  # e.g. float32 on CUDA: GQA has no fused kernel there, the math one holds L²
                print(f"skipping HF re-prefill after {frames} frames ({length} tokens): out of device memory",
                      file=sys.stderr)
                break
            out[frames] = best
    return out


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


PHASES = ("vision", "llm", "bank", "retrieval", "gather", "prefill", "decode", "other")


def print_host_work(work):
    """The host work table: 'ops/syncs' per phase, in the order the work happens."""
    def order(counts):
        return [p for p in PHASES if p in counts["ops"]]

    def cells(counts):
        return "".join(f"{counts['ops'][p]:>10,.0f}/{counts['syncs'][p]:<5,.0f}" for p in order(counts))
    for i, (regime, c) in enumerate(work["per_frame"].items()):
        if i == 0:
            print(f"\n{'operator calls/host syncs':<28}" + "".join(f"{p:>16}" for p in order(c)))
        print(f"  {'per frame, ' + regime.replace('_', ' '):<26}{cells(c)}")
    for i, q in enumerate(work["per_question"]):
        if i == 0:
            print(f"{'':<28}" + "".join(f"{p:>16}" for p in order(q)))
        print(f"  {'question after ' + str(q['after_frames']) + ' frames':<26}{cells(q)}")


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


def build_revision(rev, build, jobs=2):
    """svqa_bench of revision `rev`, built in a git worktree of its own under BUILD/against/ (reused
    while it is at that commit), its .venv the one of this tree."""
    commit = subprocess.run(["git", "rev-parse", "--verify", f"{rev}^{{commit}}"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout.strip()
    tree = build / "against" / commit[:12]
    if not (tree / ".git").exists():
        tree.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), commit], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
    venv = tree / ".venv"
    if not venv.exists() and (ROOT / ".venv").exists():
        venv.symlink_to((ROOT / ".venv").resolve())
    print(f"building svqa_bench of {rev} ({commit[:12]}) in {tree} ...", file=sys.stderr)
    subprocess.run(["cmake", "--preset", "default"], cwd=tree, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", "--preset", "default", "-j", str(jobs), "--target", "svqa_bench"], cwd=tree,
                   check=True, stdout=subprocess.DEVNULL)
    return tree / "build" / "bin" / "svqa_bench", commit


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


def print_against(c, load):
    print(f"\n{'this tree against ' + c['rev'][:12] + ' (same export, same run)':<44}{c['rev'][:9]:>10}{'this':>10}"
          f"{'this/rev':>10}   load average {load}")
    for key, ratio in c["ours_over_theirs"].items():
        print(f"  {key:<42}{c['theirs'][key]:>10.3f}{c['ours'][key]:>10.3f}{ratio:>10.2f}")


def mib(b):
    return f"{b / 2**20:,.0f} MiB"


def print_table(report):
    m, s = report["measured"], report["summary"]
    shape, st = m["shape"], m["settings"]
    print(f"svqa speed ({report['mode']}): LLM {shape['layers']} layers, hidden {shape['hidden']}, "
          f"{shape['heads']}/{shape['kv_heads']} heads, {shape['tokens_per_unit']} tokens per {shape['frames_per_unit']} frame(s), {st['dtype']}, "
          f"{st['device']}, {st['threads']} threads; n_local {st['n_local']}, r {st['retrieve_size']}; "
          f"load average {report['load_before']} → {report['load_after']}; {report['machine']}; "
          f"OMP_WAIT_POLICY={report['omp_wait_policy']}")
    if "peak_flops_per_s" in m:
        print(f"\nmatmul peak (2048³): {m['peak_flops_per_s'] / 1e9:.0f} GFLOP/s")
    print(f"\n{'encode (per frame)':<28}{'LLM s':>9}{'floor s':>9}{'× floor':>9}{'× peak':>8}{'GFLOP':>8}"
          f"{'vision s':>10}{'floor s':>9}{'× floor':>9}{'frames':>8}")
    for regime, e in s["encode"].items():
        print(f"  {regime.replace('_', ' '):<26}{e['s_per_frame']:>9.3f}{e['floor_s_per_frame']:>9.3f}{e['x_floor']:>9.2f}"
              f"{e['x_peak']:>8.2f}{e['gflops_per_frame']:>8.1f}{e['vision_s_per_frame']:>10.3f}"
              f"{e['vision_floor_s_per_frame']:>9.3f}{e['vision_x_floor']:>9.2f}{e['frames']:>8}")
    print(f"\n{'time to first token':<22}{'retrieve':>9}{'gather':>8}{'prefill':>9}{'TTFT':>8}{'gather %':>9}"
          f"{'floor s':>9}{'× floor':>8}{'HF re-prefill':>14}{'TTFT/HF':>9}{'floor/HF':>9}{'peak/HF':>9}{'FLOP/HF':>9}"
          f"{'HF GFLOP/s':>11}")
    for r in s["ttft"]:
        hf = f"{r['hf_reprefill_s']:.2f} s" if r["hf_reprefill_s"] else "-"
        ratio = f"{r['x_hf']:.4f}" if r["x_hf"] else "-"
        floor = f"{r['floor_s']:.3f}" if r["floor_s"] else "-"
        x_floor = f"{r['x_floor']:.2f}" if r["x_floor"] else "-"
        floor_hf = f"{r['floor_x_hf']:.4f}" if r["floor_x_hf"] else "-"
        peak_hf = f"{r['peak_x_hf']:.4f}" if r["peak_x_hf"] else "-"
        flops_hf = f"{r['flops_x_hf']:.4f}" if r["flops_x_hf"] else "-"
        hf_rate = f"{r['hf_gflops_per_s']:.0f}" if r["hf_gflops_per_s"] else "-"
        print(f"  after {r['after_frames']:>4} frames{'':<5}{r['retrieve_s']:>9.3f}{r['gather_s']:>8.3f}{r['prefill_s']:>9.3f}"
              f"{r['ttft_s']:>8.3f}{100 * r['gather_share']:>8.0f}%{floor:>9}{x_floor:>8}{hf:>14}{ratio:>9}{floor_hf:>9}"
              f"{peak_hf:>9}{flops_hf:>9}{hf_rate:>11}")
    print_host_work(s["host_work"])
    mem = s["memory"]
    print(f"\nmemory: RSS after loading {mib(mem['rss_loaded'])}, peak {mib(mem['peak_rss'])} "
          f"(+{mib(mem['peak_minus_loaded'])} = {mem['x_bank_and_window']:.2f}× bank + window); "
          f"bank {mib(mem['bank_bytes'])} ({mem['bank_bytes_per_frame'] / 2**20:.2f} MiB/frame), "
          f"window {mib(mem['window_bytes'])}; KV {mem['kv_gb_per_hour_at_0.5fps']:.2f} GB/hour at 0.5 fps; "
          f"peak = {mem['x_weights_bank_and_window']:.2f}× (weights {mib(mem['weights_bytes'])} + bank + window)")
    if "vision" in mem:
        v = mem["vision"]
        counts = sorted((k for k in v if k.isdigit()), key=int)
        one, many = v[counts[0]], v[counts[-1]]
        print(f"vision call: {mib(one['peak_above_before'])} above the process before it for one unit, "
              f"{mib(many['peak_above_before'])} for {v['frames']} frames (features {mib(many['feature_bytes'])}): "
              f"{v['x_one_plus_features']:.2f}× one unit + the added frames' features")
    if "mukv" in report:
        c = report["mukv"]
        after = report["measured"]["questions"][-1]["after_frames"]
        print(f"\n{'MuKV vs ReKV, same export and stream':<40}{'ReKV':>12}{'MuKV':>12}{'MuKV/ReKV':>11}")
        for key, label, fmt in (("encode_frames_per_s", "encode frames/s (vision + LLM)", "{:.2f}"),
                                ("llm_frames_per_s", "encode frames/s (LLM only)", "{:.2f}"),
                                ("memory_tokens_per_300_frames", "memory tokens per 300 frames", "{:,.0f}"),
                                ("context_tokens", f"context tokens after {after} frames", "{:,}"),
                                ("ttft_s", f"TTFT s after {after} frames", "{:.3f}")):
            print(f"  {label:<38}{fmt.format(c['rekv'][key]):>12}{fmt.format(c['mukv'][key]):>12}"
                  f"{c['mukv_over_rekv'][key]:>11.3f}")
    print_long(report)


def print_long(report):
    if "long" in report:
        lg = report["long"]
        print(f"\n{'stream time':>12}{'frames':>8}{'RSS':>12}{'wall s':>9}")
        for smp in lg["samples"]:
            print(f"{smp['stream_s'] / 60:>10.0f} m{smp['frames']:>8}{mib(smp['rss']):>12}{smp['wall_s']:>9.0f}")
        if lg["rss_at_10min"]:
            print(f"peak sampled RSS / RSS at 10 min: {lg['peak_over_10min']:.3f}")


def quiet_openmp_waits():
    """OpenMP threads that spin between parallel regions lose their time slices on a machine shared
    with other work, and a 2-thread run then waits on a descheduled spinner at every region (measured
    here: 12 s per frame instead of 0.2 s under load 12). Sleeping waits cost a few microseconds per
    region on an idle machine. Set before torch loads, for svqa_bench and Hugging Face alike; an
    OMP_WAIT_POLICY already in the environment wins."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def report_memory_only(args, name, mode, binary, export, work, load_before):
    """A method other than ReKV over the --long stream: RSS over time and the bank's bytes, no timing model."""
    with tempfile.TemporaryDirectory(dir=work) as spill:
        measured = run_svqa_bench(binary, export, mode, args.threads, spill, args.method, args.device, args.dtype)
    report = {"mode": f"{name}, {args.method}", "machine": f"{platform.machine()}, {os.cpu_count()} cpus, {platform.node()}",
              "load_before": load_before, "load_after": load_average(), "measured": measured,
              "long": rss_over_time(measured)}
    if args.save:
        args.save.write_text(json.dumps(report, indent=1) + "\n")
    if args.json:
        print(json.dumps(report, indent=1))
        return
    mem = measured["memory"]
    print(f"svqa memory ({report['mode']}): load average {report['load_before']} → {report['load_after']}; "
          f"bank at the end {mib(mem['bank_bytes'])} ({mem['bank_tokens']:,} tokens), peak RSS {mib(mem['peak_rss'])}")
    print_long(report)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--quick", action="store_true", help="smoke run (CI): small model, 12 frames")
    group.add_argument("--long", action="store_true", help="1-hour stream at 0.5 fps with the disk tier")
    parser.add_argument("--mukv", action="store_true", help="also run MuKV on the same export and stream, and compare")
    parser.add_argument("--method", choices=["rekv", "infinipot_v"], default="rekv",
                        help="the stream's method; infinipot_v (its preset: a cache of at most 16 frames, no retrieval) "
                             "runs with --long and reports its memory over time")
    parser.add_argument("--shape", choices=sorted(SHAPES), help="a real model's shape (random weights) instead of hidden 512")
    parser.add_argument("--json", action="store_true", help="print the report as JSON instead of the table")
    parser.add_argument("--save", type=pathlib.Path, help="also write the JSON report to this file")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cpu", help="torch device for svqa and Hugging Face alike, e.g. cuda")
    parser.add_argument("--dtype", choices=["float32", "float16", "bfloat16"], help="default: the export's (float32)")
    parser.add_argument("--frames", type=int, help="override the mode's frame count")
    parser.add_argument("--no-hf", action="store_true", help="skip Hugging Face re-prefill")
    parser.add_argument("--against", metavar="REV", help="also build and run revision REV on the same export: ratio per phase")
    parser.add_argument("--build", type=pathlib.Path, default=ROOT / "build", help="build directory (bin/svqa_bench)")
    parser.add_argument("--work", type=pathlib.Path, help="where exports and spill files go (default BUILD/bench)")
    args = parser.parse_args(argv)

    if args.shape and args.long:
        parser.error("--shape runs the full or --quick mode, not --long")
    if args.method != "rekv" and not args.long:
        parser.error("--method infinipot_v runs with --long (its memory over time; the timing tables model ReKV)")
    quiet_openmp_waits()
    name = "quick" if args.quick else "long" if args.long else "full"
    mode = dict(SHAPE_MODES[name] if args.shape else MODES[name])
    if args.frames:
        mode["frames"] = args.frames
        mode["questions"] = [q for q in mode["questions"] if q <= args.frames] or [args.frames]
    binary = args.build / "bin" / "svqa_bench"
    if not binary.exists():
        sys.exit(f"{binary} not found: build first (cmake --build build)")
    work = args.work or args.build / "bench"
    if args.shape:
        depth = "2-layers" if args.quick else "full"
        export, checkpoint = make_shape_export(args.shape, not args.quick,
                                               work / f"export-{args.shape}-{depth}-{args.dtype or 'float32'}", args.dtype)
    else:
        tag = hashlib.sha1(json.dumps(mode["shape"], sort_keys=True).encode()).hexdigest()[:8]
        export = make_export(mode["shape"], work / f"export-{tag}-{args.dtype or 'float32'}", args.dtype)
        checkpoint = export / "hf"

    load_before = load_average()
    if args.method != "rekv":
        return report_memory_only(args, name, mode, binary, export, work, load_before)
    theirs_binary = build_revision(args.against, args.build)[0] if args.against else None
    with tempfile.TemporaryDirectory(dir=work) as spill:
        if theirs_binary:  # first, so that a load that changes over the run favours neither side
            theirs = run_svqa_bench(theirs_binary, export, mode, args.threads, spill, device=args.device, dtype=args.dtype)
        measured = run_svqa_bench(binary, export, mode, args.threads, spill, device=args.device, dtype=args.dtype)
    hf_frames = [] if args.no_hf else [f for f in mode["hf_frames"] if f in mode["questions"]]
    hf = hf_reprefill(checkpoint, measured, hf_frames, args.threads, 2, args.device, args.dtype) if hf_frames else {}
    report = {"mode": f"{name}, {args.shape}" if args.shape else name, "machine": f"{platform.machine()}, {os.cpu_count()} cpus, {platform.node()}",
              "omp_wait_policy": os.environ["OMP_WAIT_POLICY"],
              "load_before": load_before, "load_after": load_average(), "measured": measured,
              "hf_reprefill_s": hf, "summary": summarise(measured, hf)}
    if args.long:
        report["long"] = rss_over_time(measured)
    if theirs_binary:
        report["against"] = compare_against(args.against, theirs, measured)
    if args.mukv:
        with tempfile.TemporaryDirectory(dir=work) as spill:
            report["mukv"] = compare_mukv(measured, run_svqa_bench(binary, export, mode, args.threads, spill, "mukv",
                                                                   args.device, args.dtype))
    if args.save:
        args.save.write_text(json.dumps(report, indent=1) + "\n")
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print_table(report)
        if "against" in report:
            print_against(report["against"], f"{report['load_before']} → {report['load_after']}")


if __name__ == "__main__":
    main()
