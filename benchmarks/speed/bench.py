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

from bench_summary import compare_against, compare_mukv, rss_over_time, summarise
from bench_tables import mib, print_against, print_long, print_table

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


def parse_args(argv):
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
    return args


def stream_mode(args):
    """The mode's name and stream settings, --frames applied."""
    name = "quick" if args.quick else "long" if args.long else "full"
    mode = dict(SHAPE_MODES[name] if args.shape else MODES[name])
    if args.frames:
        mode["frames"] = args.frames
        mode["questions"] = [q for q in mode["questions"] if q <= args.frames] or [args.frames]
    return name, mode


def export_for(args, mode, work):
    """The export the stream runs on, and the Hugging Face checkpoint its re-prefill loads."""
    if args.shape:
        depth = "2-layers" if args.quick else "full"
        return make_shape_export(args.shape, not args.quick,
                                 work / f"export-{args.shape}-{depth}-{args.dtype or 'float32'}", args.dtype)
    tag = hashlib.sha1(json.dumps(mode["shape"], sort_keys=True).encode()).hexdigest()[:8]
    export = make_export(mode["shape"], work / f"export-{tag}-{args.dtype or 'float32'}", args.dtype)
    return export, export / "hf"


def main(argv=None):
    args = parse_args(argv)
    quiet_openmp_waits()
    name, mode = stream_mode(args)
    binary = args.build / "bin" / "svqa_bench"
    if not binary.exists():
        sys.exit(f"{binary} not found: build first (cmake --build build)")
    work = args.work or args.build / "bench"
    export, checkpoint = export_for(args, mode, work)

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
