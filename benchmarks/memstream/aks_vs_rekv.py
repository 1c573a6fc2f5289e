"""Mem-Stream's AKS vs ReKV while encoding: the tokens a new frame attends to in the window, and
encode frames/s, on one export and one synthetic stream.

    .venv/bin/python benchmarks/memstream/aks_vs_rekv.py --out build/bench-aks [--export DIR] [--seconds 600]
        [--n-local 2000] [--set runtime.device=cuda --set runtime.dtype=bfloat16]

`svqa run` once per method (ReKV's sliding window; AKS at ×4 and ×16; the same window of n_local
stream tokens) with a question every `--every` seconds (`bank_recent` retrieval, one new token: the
answering is not what is measured). From each run's predictions.jsonl: window tokens =
`extra.<encoder>.window_tokens` at every question (layer 0; the sinks count while they are in the window),
encode frames/s = Σ encode_frames / Σ encode_s. Without --export it makes the tiny random Qwen2.5-VL
export (36 tokens per frame-feature, 3 layers): the window ratio carries over to real models, the
frames/s do not. Writes OUT/aks_vs_rekv.{json,md,svg}.
"""

import argparse
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from method_runs import add_stream_args, run_method, synthetic_stream, write_results  # noqa: E402

METHODS = [("ReKV", "{type: rekv_sliding_window, options: {n_local: N_LOCAL}}"),
           ("AKS x4", "{type: memstream_aks, options: {n_local: N_LOCAL, compression: 4}}"),
           ("AKS x16", "{type: memstream_aks, options: {n_local: N_LOCAL, compression: 16}}")]


def measure(records):
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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_stream_args(ap, "build/bench-aks", "qwen2_5_vl")
    ap.add_argument("--repeats", type=int, default=3, help="runs per method, interleaved; frames/s is their median")
    a = ap.parse_args()
    out, export = synthetic_stream(a, "qwen2_5_vl", ["red", "green"])
    retrieval = "{type: bank_recent, options: {retrieve_size: 4}}"
    runs = {label: [] for label, _ in METHODS}
    for _ in range(a.repeats):  # interleaved, so a load spike on a shared machine hits every method alike
        for label, encoding in METHODS:
            name = label.lower().replace(" ", "_")
            runs[label].append(measure(run_method(a, out, export, name, encoding.replace("N_LOCAL", str(a.n_local)), retrieval)))
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
    write_results(a, out, export, "aks_vs_rekv", rows, md, svg)


if __name__ == "__main__":
    main()
