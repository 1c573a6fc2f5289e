"""Byte-level BPE speed by word length: `svqa tokenize` against Hugging Face `tokenizers` on one
long word, one long line of short words, and an 8 MB line (subtitles, long prompts).

    .venv/bin/python benchmarks/speed/bpe_speed.py [--svqa build/bin/svqa] [--sizes 1000,10000,...]

Prints one markdown row per input: characters, seconds for svqa (whole process: load + encode),
seconds for `tokenizers` (encode only), and whether the ids are equal. A harness, not a test: the
figures depend on the machine (docs/development.md records them).
"""

import argparse
import json
import pathlib
import random
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from models.export.tiny import train_tokenizer  # noqa: E402  (a Qwen2-style byte-level BPE)


def inputs(sizes):
    rng = random.Random(0)
    letters = "etaoinshrdlucmfwypvbgkqjxz"
    for n in sizes:
        yield f"one word of {n} letters", "".join(rng.choice(letters) for _ in range(n))
    for n in sizes:
        words, length = [], 0
        while length < n:
            words.append("".join(rng.choice(letters) for _ in range(rng.randint(2, 9))))
            length += len(words[-1]) + 1
        yield f"{len(words)} words, one line", " ".join(words)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--svqa", default=str(ROOT / "build" / "bin" / "svqa"))
    parser.add_argument("--sizes", default="1000,10000,100000,1000000,8000000")
    parser.add_argument("--timeout", type=float, default=300, help="seconds before svqa is given up on")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tok = train_tokenizer("qwen2_5_vl", vocab_size=2000)
        path = pathlib.Path(tmp) / "tokenizer.json"
        tok.save(str(path))
        print("| input | characters | svqa tokenize (s) | tokenizers (s) | same ids |")
        print("|---|---|---|---|---|")
        for name, text in inputs([int(s) for s in args.sizes.split(",")]):
            t0 = time.perf_counter()
            want = tok.encode(text).ids
            hf_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            try:
                r = subprocess.run([args.svqa, "tokenize", str(path)], input=json.dumps(text) + "\n",
                                   capture_output=True, text=True, timeout=args.timeout, check=True)
                ours_s, same = f"{time.perf_counter() - t0:.2f}", json.loads(r.stdout) == want
            except subprocess.TimeoutExpired:
                ours_s, same = f"> {args.timeout:.0f}", "–"
            print(f"| {name} | {len(text):,} | {ours_s} | {hf_s:.2f} | {same} |", flush=True)


if __name__ == "__main__":
    main()
