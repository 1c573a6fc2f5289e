"""Mem-Stream's AKS vs ReKV while encoding: the tokens a new frame attends to in the window, and
encode frames/s, on one export and one synthetic stream.

    .venv/bin/python benchmarks/memstream/aks_vs_rekv.py --out build/bench-aks [--export DIR] [--seconds 600]
        [--n-local 2000] [--set runtime.device=cuda --set runtime.dtype=bfloat16]

`svqa run` once per method (ReKV's sliding window; AKS at ×4 and ×16; the same window of n_local
stream tokens) with a question every `--every` seconds (`recent` retrieval, one new token: the
answering is not what is measured). From each run's predictions.jsonl: window tokens =
`extra.<encoder>.window_tokens` at every question (layer 0; the sinks count while they are in the window),
encode frames/s = Σ encode_frames / Σ encode_s. Without --export it makes the tiny random Qwen2.5-VL
export (36 tokens per frame-feature, 3 layers): the window ratio carries over to real models, the
frames/s do not. Writes OUT/aks_vs_rekv.{json,md,svg}.
"""

import argparse
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
METHODS = [("ReKV", "{type: rekv_sliding_window, options: {n_local: N}}"),
           ("AKS x4", "{type: memstream_aks, options: {n_local: N, compression: 4}}"),
           ("AKS x16", "{type: memstream_aks, options: {n_local: N, compression: 16}}")]


def run(cmd):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, cwd=ROOT)
    if r.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))} failed:\n{r.stdout}\n{r.stderr}")


def measure(path):
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    answered = sorted((r for r in records if "error" not in r), key=lambda r: r["time"])
    frames = sum(r["timing"]["encode_frames"] for r in answered)
    seconds = sum(r["timing"]["encode_s"] for r in answered)
    window = [next(v["window_tokens"] for v in r["extra"].values() if "window_tokens" in v) for r in answered]
    return {"times": [r["time"] for r in answered], "window_tokens": window,
            "encode_fps": frames / seconds, "frames": frames}


def svg(rows, path):
    """Left: window tokens over stream time, one line per method. Right: encode frames/s, one bar each."""
    w, h, pad, colors = 760, 320, 48, ["#4c72b0", "#dd8452", "#55a868"]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">',
           f'<rect width="{w}" height="{h}" fill="white"/>']
    x0, x1, y0, y1 = pad, w / 2 - 10, h - pad, pad
    t_max = max(max(r["times"]) for r in rows)
    k_max = max(max(r["window_tokens"]) for r in rows)
    out += [f'<text x="{(x0 + x1) / 2}" y="20" text-anchor="middle" font-size="13">window tokens a new frame attends to</text>',
            f'<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}" stroke="black"/>',
            f'<line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y1}" stroke="black"/>',
            f'<text x="{x0}" y="{y0 + 16}">0</text><text x="{x1}" y="{y0 + 16}" text-anchor="end">{t_max:.0f} s</text>',
            f'<text x="{x0 - 4}" y="{y1 + 4}" text-anchor="end">{k_max}</text>']
    for i, r in enumerate(rows):
        pts = " ".join(f"{x0 + (x1 - x0) * t / t_max:.1f},{y0 - (y0 - y1) * k / k_max:.1f}"
                       for t, k in zip(r["times"], r["window_tokens"]))
        out.append(f'<polyline points="{pts}" fill="none" stroke="{colors[i]}" stroke-width="2"/>')
        out.append(f'<text x="{x1 - 4}" y="{y1 + 14 * (i + 1)}" text-anchor="end" fill="{colors[i]}">{r["method"]}</text>')
    bx0, bx1, f_max = w / 2 + pad, w - 20, max(r["encode_fps"] for r in rows)
    out.append(f'<text x="{(bx0 + bx1) / 2}" y="20" text-anchor="middle" font-size="13">encode frames/s</text>')
    bar = (bx1 - bx0) / len(rows)
    for i, r in enumerate(rows):
        top = y0 - (y0 - y1) * r["encode_fps"] / f_max
        x = bx0 + i * bar + 6
        out.append(f'<rect x="{x:.1f}" y="{top:.1f}" width="{bar - 12:.1f}" height="{y0 - top:.1f}" fill="{colors[i]}"/>')
        out.append(f'<text x="{x + (bar - 12) / 2:.1f}" y="{top - 4:.1f}" text-anchor="middle">{r["encode_fps"]:.3g}</text>')
        out.append(f'<text x="{x + (bar - 12) / 2:.1f}" y="{y0 + 16}" text-anchor="middle">{r["method"]}</text>')
    out.append(f'<line x1="{bx0}" y1="{y0}" x2="{bx1}" y2="{y0}" stroke="black"/></svg>')
    path.write_text("\n".join(out) + "\n")


def run_method(a, out, export, label, encoding):
    name = label.lower().replace(" ", "_")
    (out / f"{name}.yaml").write_text(f"""name: {name}
backbone: {{type: torchscript, options: {{export: {export}}}}}
encoding: {encoding.replace('N', str(a.n_local))}
retrieval: {{type: recent, options: {{frames: 4}}}}
benchmark: {{type: stream_list, options: {{annotations: {out / 'streams.json'}}}}}
stream: {{fps: 0.5, chunk_frames: 16, max_new_tokens: 1}}
output: {{dir: {out / 'results'}}}
""")
    predictions = out / "results" / name / "predictions.jsonl"
    predictions.unlink(missing_ok=True)  # measure afresh
    run([a.svqa, "run", out / f"{name}.yaml", *[x for s in a.set for x in ("--set", s)]])
    return measure(predictions)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="build/bench-aks")
    ap.add_argument("--export", help="Qwen2.5-VL export (default: make the tiny random one under OUT)")
    ap.add_argument("--seconds", type=float, default=600, help="length of the synthetic stream")
    ap.add_argument("--every", type=float, default=60, help="seconds between questions")
    ap.add_argument("--n-local", type=int, default=2000, help="window in stream tokens, the same for every method")
    ap.add_argument("--repeats", type=int, default=3, help="runs per method, interleaved; frames/s is their median")
    ap.add_argument("--svqa", default=str(ROOT / "build/bin/svqa"))
    ap.add_argument("--set", action="append", default=[], help="passed to svqa run (e.g. runtime.device=cuda)")
    a = ap.parse_args()
    out = (ROOT / a.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    export = pathlib.Path(a.export).resolve() if a.export else out / "tiny-qwen2_5_vl"
    if not a.export and not (export / "manifest.json").exists():
        run([sys.executable, "-m", "models.export", "--tiny", "qwen2_5_vl", "--seed", "0", "--out", export])
    run([a.svqa, "make-video", out / "video.avi", "--seconds", a.seconds])
    questions = [{"id": f"q{t}", "time": float(t), "question": "What color is the background?",
                  "options": ["red", "green"], "answer": "red"} for t in range(int(a.every), int(a.seconds), int(a.every))]
    (out / "streams.json").write_text(json.dumps({"streams": [{"id": "synthetic", "video": "video.avi",
                                                              "questions": questions}]}))
    runs = {label: [] for label, _ in METHODS}
    for _ in range(a.repeats):  # interleaved, so a load spike on a shared machine hits every method alike
        for label, encoding in METHODS:
            runs[label].append(run_method(a, out, export, label, encoding))
    rows = []
    for label, _ in METHODS:
        fps = sorted(r["encode_fps"] for r in runs[label])
        rows.append({**runs[label][0], "method": label, "encode_fps": fps[len(fps) // 2], "encode_fps_runs": fps})
    dense, base_fps = rows[0]["window_tokens"][-1], rows[0]["encode_fps"]
    md = ["| method | window tokens at the end | × ReKV | encode frames/s (median) | × ReKV | runs |",
          "|---|---:|---:|---:|---:|---|"]
    for r in rows:
        md.append(f"| {r['method']} | {r['window_tokens'][-1]} | {r['window_tokens'][-1] / dense:.3f} | "
                  f"{r['encode_fps']:.2f} | {r['encode_fps'] / base_fps:.2f} | "
                  f"{', '.join(f'{x:.2f}' for x in r['encode_fps_runs'])} |")
    (out / "aks_vs_rekv.json").write_text(json.dumps({"export": str(export), "seconds": a.seconds,
                                                      "n_local": a.n_local, "rows": rows}, indent=2) + "\n")
    (out / "aks_vs_rekv.md").write_text("\n".join(md) + "\n")
    svg(rows, out / "aks_vs_rekv.svg")
    print("\n".join(md))
    print(f"written: {out / 'aks_vs_rekv.json'}, .md, .svg")


if __name__ == "__main__":
    main()
