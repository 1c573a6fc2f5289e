"""StreamKV vs ReKV on one export: encode frames/s and memory per hour of video.

    .venv/bin/python benchmarks/streamkv/compare.py --out build/bench-streamkv [--export DIR] [--seconds 600]
        [--set runtime.device=cuda --set runtime.dtype=float16]

Runs `svqa run` once per method over the same synthetic stream (`svqa make-video`, questions every
`--every` seconds, streaming protocol) and reads each run's predictions.jsonl: encode frames/s =
Σ encode_frames / Σ encode_s over the questions; memory per hour = K/V bytes held (RAM + disk) when
the last question is asked, per hour of stream. Without --export it makes the tiny random LLaVA-OV
export (9 tokens per frame: the ratios are what carry over, not the absolute numbers). Writes
OUT/streamkv_vs_rekv.{json,md,svg}.
"""

import argparse
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from method_runs import add_stream_args, run_method, synthetic_stream, write_results  # noqa: E402

# (label, encoding section, retrieval section) — the same window for every method.
METHODS = [
    ("ReKV", "{type: rekv_sliding_window, options: {n_local: N_LOCAL}}",
     "{type: internal, options: {retrieve_size: 64}}"),
    ("StreamKV keep 1.0", "{type: streamkv_segments, options: {n_local: N_LOCAL, keep_fraction: 1.0}}",
     "{type: streamkv_layer_adaptive}"),
    ("StreamKV keep 0.6", "{type: streamkv_segments, options: {n_local: N_LOCAL, keep_fraction: 0.6}}",
     "{type: streamkv_layer_adaptive}"),
    ("StreamKV keep 0.4", "{type: streamkv_segments, options: {n_local: N_LOCAL, keep_fraction: 0.4}}",
     "{type: streamkv_layer_adaptive}"),
]


def measure(records):
    answered = [r for r in records if "error" not in r]
    if not answered:
        return None
    frames = sum(r["timing"]["encode_frames"] for r in answered)
    seconds = sum(r["timing"]["encode_s"] for r in answered)
    last = max(answered, key=lambda r: r["time"])
    mem = last["memory"]
    kv = mem["ram_bytes"] + mem["disk_bytes"]
    return {"frames": frames, "encode_s": seconds, "encode_fps": frames / seconds if seconds else None,
            "stream_seconds": last["time"], "kv_bytes": kv, "kv_mib_per_hour": kv / last["time"] * 3600 / 2**20,
            "blocks": mem["blocks"], "layer_tokens": mem.get("layer_tokens")}


def svg_bars(rows, path):
    """Two bar charts side by side (encode frames/s, K/V MiB per hour), one bar per method."""
    width, height, pad = 720, 300, 50
    panels = [("encode frames/s", "encode_fps"), ("K/V MiB per hour of video", "kv_mib_per_hour")]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
           f'font-size="11">', f'<rect width="{width}" height="{height}" fill="white"/>']
    colors = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3"]
    panel_w = width / len(panels)
    for p, (title, key) in enumerate(panels):
        x0 = p * panel_w + pad
        usable_w, usable_h = panel_w - 1.5 * pad, height - 2.2 * pad
        top = max((r[key] or 0) for r in rows) or 1
        out.append(f'<text x="{x0 + usable_w / 2}" y="20" text-anchor="middle" font-size="13">{title}</text>')
        bar_w = usable_w / len(rows)
        for i, r in enumerate(rows):
            v = r[key] or 0
            h = usable_h * v / top
            x, y = x0 + i * bar_w + 4, pad + usable_h - h
            out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar_w - 8:.1f}" height="{h:.1f}" fill="{colors[i % 5]}"/>')
            out.append(f'<text x="{x + (bar_w - 8) / 2:.1f}" y="{y - 4:.1f}" text-anchor="middle">{v:.3g}</text>')
            out.append(f'<text x="{x + (bar_w - 8) / 2:.1f}" y="{pad + usable_h + 14:.1f}" text-anchor="middle" '
                       f'font-size="9">{r["method"]}</text>')
        out.append(f'<line x1="{x0}" y1="{pad + usable_h}" x2="{x0 + usable_w}" y2="{pad + usable_h}" stroke="black"/>')
    out.append("</svg>")
    path.write_text("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_stream_args(ap, "build/bench-streamkv", "llava_onevision")
    a = ap.parse_args()
    out, export = synthetic_stream(a, "llava_onevision", ["red", "green", "blue"])
    rows = []
    for label, encoding, retrieval in METHODS:
        name = label.lower().replace(" ", "_").replace(".", "")
        records = run_method(a, out, export, name, encoding.replace("N_LOCAL", str(a.n_local)), retrieval)
        m = measure(records)
        if m is None:
            sys.exit(f"{label}: no answered question in {out / 'results' / name}")
        rows.append({"method": label, **m})
    base = rows[0]["kv_mib_per_hour"]
    for r in rows:
        r["memory_vs_rekv"] = r["kv_mib_per_hour"] / base if base else None
    md = ["| method | encode frames/s | K/V MiB per hour | × ReKV memory | blocks |", "|---|---|---|---|---|"]
    for r in rows:
        md.append(f"| {r['method']} | {r['encode_fps']:.2f} | {r['kv_mib_per_hour']:.2f} | {r['memory_vs_rekv']:.3f} "
                  f"| {r['blocks']} |")
    write_results(a, out, export, "streamkv_vs_rekv", rows, md, svg_bars)


if __name__ == "__main__":
    main()
