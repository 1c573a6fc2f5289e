#!/usr/bin/env python3
"""Memory snapshots' benchmark (docs/performance.md, "Memory snapshots").

1. A grid of 4 retrieval settings (ReKV, `internal`, retrieve_size 8/16/32/64) sharing a memory
   cache, against one run of the same stream without it: wall seconds of each and their ratio (the
   target: the grid ≤ 1.3 × one run, since it encodes the stream once). The harness's real-shaped
   export (bench.py's: LLaVA-OV proportions at hidden 512, 196 tokens per frame), a 256-frame stream.
2. Opening a 1-hour snapshot (1,800 frame blocks of LLaVA-OV-0.5B's K/V shape: 24 layers, 2 kv
   heads, head_dim 64, 196 tokens, float16): seconds, RSS growth, then reading 64 blocks per layer
   (build/bin/svqa_snapshot_bench).

    .venv/bin/python benchmarks/speed/snapshot_bench.py           # both, full size (6 minutes on 2 idle CPUs)
    .venv/bin/python benchmarks/speed/snapshot_bench.py --quick   # smoke run (CI): small export, 12 frames
    .venv/bin/python benchmarks/speed/snapshot_bench.py --load-only   # part 2 alone (half a minute)
"""

import argparse
import hashlib
import json
import pathlib
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from bench import MODES, ROOT, make_export, quiet_openmp_waits  # noqa: E402

SIZES = {
    "full": dict(shape=MODES["full"]["shape"], frames=256, n_local=15000, retrieve=[8, 16, 32, 64], load_frames=1800),
    "quick": dict(shape=MODES["quick"]["shape"], frames=12, n_local=1000, retrieve=[1, 2, 3, 4], load_frames=20),
}


def experiment(export, streams, n_local, retrieve, results, threads, extra=""):
    return f"""
backbone: {{type: torchscript, options: {{export: {export}}}}}
encoding: {{type: rekv_sliding_window, options: {{n_local: {n_local}}}}}
retrieval: {{type: internal, options: {{retrieve_size: {retrieve}}}}}
benchmark: {{type: stream_list, options: {{annotations: {streams}}}}}
stream: {{fps: 0.5, max_new_tokens: 3}}
runtime: {{threads: {threads}}}
output: {{dir: {results}}}
{extra}"""


def timed(cmd):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))} failed:\n{r.stdout}{r.stderr}")
    return time.perf_counter() - t0, r.stdout + r.stderr


def grid_vs_one_run(svqa, export, size, work, threads):
    seconds = size["frames"] * 2
    subprocess.run([svqa, "make-video", work / "video.avi", "--seconds", str(seconds)], check=True, capture_output=True)
    times = [seconds * k // 4 for k in (1, 2, 3, 4)]
    questions = [{"id": f"q{t}", "time": float(t), "question": "What color is the background?",
                  "options": ["red", "green", "blue"], "answer": "red"} for t in times]
    (work / "streams.json").write_text(json.dumps({"streams": [{"id": "s", "video": "video.avi", "questions": questions}]}))
    largest = size["retrieve"][-1]
    (work / "one.yaml").write_text("name: one\n" + experiment(export, work / "streams.json", size["n_local"], largest,
                                                              work / "results", threads))
    axes = "[" + ", ".join(map(str, size["retrieve"])) + "]"
    (work / "grid.yaml").write_text("name: grid\n" + experiment(
        export, work / "streams.json", size["n_local"], largest, work / "results", threads,
        f"memory: {{cache: {work / 'cache'}}}\ngrid:\n  mode: product\n  axes:\n    retrieval.options.retrieve_size: {axes}\n"))
    one_s, _ = timed([svqa, "run", work / "one.yaml"])
    grid_s, log = timed([svqa, "grid", work / "grid.yaml"])
    return {"frames": size["frames"], "settings": size["retrieve"], "one_run_s": round(one_s, 2),
            "grid_s": round(grid_s, 2), "grid_over_one_run": round(grid_s / one_s, 3),
            "streams_encoded": log.count("encoded, saved as snapshot"),
            "streams_replayed": log.count("answered from snapshot")}


def snapshot_load(binary, frames, work):
    """Writes the snapshot, then opens it in a fresh process (whose RSS did not just hold and free the
    blocks being written): the write's seconds from the first, the rest from the second."""
    reports = []
    for reuse in ([], ["--reuse"]):
        r = subprocess.run([binary, "--dir", work / "load", "--frames", str(frames), "--retrieve",
                            str(min(64, frames)), *reuse], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"{binary} failed: {r.stderr}")
        reports.append(json.loads(r.stdout))
    return {**reports[1], "write_s": reports[0]["write_s"]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smoke run (CI): small export, 12 frames, 20-frame snapshot")
    parser.add_argument("--load-only", action="store_true", help="only part 2: opening a 1-hour snapshot")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--build", type=pathlib.Path, default=ROOT / "build", help="build directory (bin/svqa)")
    parser.add_argument("--save", type=pathlib.Path, help="also write the JSON report to this file")
    args = parser.parse_args(argv)
    quiet_openmp_waits()
    size = SIZES["quick" if args.quick else "full"]
    svqa, loader = args.build / "bin" / "svqa", args.build / "bin" / "svqa_snapshot_bench"
    for binary in (svqa, loader):
        if not binary.exists():
            sys.exit(f"{binary} not found: build first (cmake --build build)")
    bench_dir = args.build / "bench"
    bench_dir.mkdir(parents=True, exist_ok=True)
    tag = hashlib.sha1(json.dumps(size["shape"], sort_keys=True).encode()).hexdigest()[:8]
    with tempfile.TemporaryDirectory(dir=bench_dir) as work:
        work = pathlib.Path(work)
        report = {"mode": "quick" if args.quick else "full"}
        if not args.load_only:
            export = make_export(size["shape"], bench_dir / f"export-{tag}-float32")  # bench.py's, reused
            report["grid"] = grid_vs_one_run(svqa, export, size, work, args.threads)
        report["load"] = snapshot_load(loader, size["load_frames"], work)
    text = json.dumps(report, indent=1)
    print(text)
    if args.save:
        args.save.write_text(text + "\n")


if __name__ == "__main__":
    main()
