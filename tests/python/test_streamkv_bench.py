"""The StreamKV vs ReKV harness (benchmarks/streamkv/compare.py) on a short stream: every method runs,
the report has its fields, and memory — a count of bytes, not a timing — orders as compression says:
StreamKV keeping 0.4 of its frame blocks holds less K/V per hour than ReKV, keeping 0.6 more than 0.4.
No speed is checked here."""

import json
import subprocess
import sys


def test_compare_runs_every_method_and_memory_follows_the_keep_fraction(root, svqa_bin, tiny_export, tmp_path):
    cmd = [sys.executable, root / "benchmarks" / "streamkv" / "compare.py", "--out", tmp_path, "--seconds", "60",
           "--every", "20", "--export", tiny_export("llava_onevision"), "--svqa", svqa_bin]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=root)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = {row["method"]: row for row in json.loads((tmp_path / "streamkv_vs_rekv.json").read_text())["rows"]}
    assert sorted(rows) == ["ReKV", "StreamKV keep 0.4", "StreamKV keep 0.6", "StreamKV keep 1.0"]
    for row in rows.values():
        assert row["frames"] > 0 and row["encode_fps"] > 0 and row["kv_bytes"] > 0
    assert rows["StreamKV keep 0.4"]["kv_mib_per_hour"] < rows["ReKV"]["kv_mib_per_hour"]
    assert rows["StreamKV keep 0.4"]["kv_mib_per_hour"] < rows["StreamKV keep 0.6"]["kv_mib_per_hour"]
    assert rows["StreamKV keep 0.6"]["kv_mib_per_hour"] < rows["StreamKV keep 1.0"]["kv_mib_per_hour"]
    assert (tmp_path / "streamkv_vs_rekv.svg").read_text().startswith("<svg")
