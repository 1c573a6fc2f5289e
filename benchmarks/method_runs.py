"""What the method-comparison harnesses share (benchmarks/streamkv/compare.py,
benchmarks/memstream/aks_vs_rekv.py): their common options, one synthetic stream with a question
every `--every` seconds on one export, and `svqa run` of one method over it, measured afresh."""

import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def run(cmd):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, cwd=ROOT)
    if r.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))} failed:\n{r.stdout}\n{r.stderr}")
    return r.stdout


def add_stream_args(ap, out, tiny):
    """--out, --export, --seconds, --every, --n-local, --svqa, --set; `tiny` names the default export."""
    ap.add_argument("--out", default=out)
    ap.add_argument("--export", help=f"export directory (default: make the tiny random {tiny} export under OUT)")
    ap.add_argument("--seconds", type=float, default=600, help="length of the synthetic stream")
    ap.add_argument("--every", type=float, default=60, help="seconds between questions")
    ap.add_argument("--n-local", type=int, default=2000, help="window in stream tokens, the same for every method")
    ap.add_argument("--svqa", default=str(ROOT / "build/bin/svqa"))
    ap.add_argument("--set", action="append", default=[], help="passed to svqa run (e.g. runtime.device=cuda)")


def synthetic_stream(a, tiny, options):
    """OUT (made), the export (the tiny `tiny` one unless --export), and OUT/streams.json: one
    synthetic video of --seconds with a multiple-choice question (`options`) every --every seconds."""
    out = (ROOT / a.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    export = pathlib.Path(a.export).resolve() if a.export else out / f"tiny-{tiny}"
    if not a.export and not (export / "manifest.json").exists():
        run([sys.executable, "-m", "models.export", "--tiny", tiny, "--seed", "0", "--out", export])
    run([a.svqa, "make-video", out / "video.avi", "--seconds", a.seconds])
    questions = [{"id": f"q{t}", "time": float(t), "question": "What color is the background?", "options": options,
                  "answer": options[0]} for t in range(int(a.every), int(a.seconds), int(a.every))]
    (out / "streams.json").write_text(json.dumps({"streams": [{"id": "synthetic", "video": "video.avi",
                                                              "questions": questions}]}))
    return out, export


def run_method(a, out, export, name, encoding, retrieval):
    """`svqa run` of one method over OUT/streams.json (its earlier predictions removed first); its records."""
    (out / f"{name}.yaml").write_text(f"""name: {name}
backbone: {{type: torchscript, options: {{export: {export}}}}}
encoding: {encoding}
retrieval: {retrieval}
benchmark: {{type: stream_list, options: {{annotations: {out / 'streams.json'}}}}}
stream: {{fps: 0.5, chunk_frames: 16, max_new_tokens: 1}}
output: {{dir: {out / 'results'}}}
""")
    predictions = out / "results" / name / "predictions.jsonl"
    predictions.unlink(missing_ok=True)  # measure afresh
    run([a.svqa, "run", out / f"{name}.yaml", *[x for s in a.set for x in ("--set", s)]])
    return [json.loads(line) for line in predictions.read_text().splitlines() if line.strip()]


def write_results(a, out, export, stem, rows, table, draw):
    """OUT/STEM.json (the runs' settings and rows), .md (`table`, its lines) and .svg (`draw(rows, path)`)."""
    (out / f"{stem}.json").write_text(json.dumps({"export": str(export), "seconds": a.seconds, "n_local": a.n_local,
                                                  "rows": rows}, indent=2) + "\n")
    (out / f"{stem}.md").write_text("\n".join(table) + "\n")
    draw(rows, out / f"{stem}.svg")
    print("\n".join(table))
    print(f"written: {out / stem}.json, .md, .svg")
