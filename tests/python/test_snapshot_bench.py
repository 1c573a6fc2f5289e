"""The memory snapshots' benchmark smoke run (benchmarks/speed/snapshot_bench.py --quick): it runs
end to end, its grid encodes the stream once and replays it three times, and the load report has
every field. No speed is checked here: the figures come from the full run on an idle machine."""

import json
import math
import subprocess
import sys


def test_quick_run_reports_the_grid_and_the_load(root, svqa_bin, tmp_path):
    saved = tmp_path / "report.json"
    r = subprocess.run([sys.executable, root / "benchmarks" / "speed" / "snapshot_bench.py", "--quick", "--build",
                        svqa_bin.parent.parent, "--save", saved], capture_output=True, text=True, cwd=root, timeout=900)
    assert r.returncode == 0, r.stderr
    report = json.loads(saved.read_text())
    grid = report["grid"]
    assert grid["settings"] == [1, 2, 3, 4] and grid["frames"] == 12
    assert (grid["streams_encoded"], grid["streams_replayed"]) == (1, 3)
    for key in ("one_run_s", "grid_s", "grid_over_one_run"):
        assert math.isfinite(grid[key]) and grid[key] > 0, key
    load = report["load"]
    assert load["frames"] == 20
    # 20 blocks × 24 layers × K and V of 196 × 2 × 64 float16, 64-byte aligned, plus positions and representatives.
    assert load["snapshot_bytes"] > 20 * 24 * 2 * 196 * 2 * 64 * 2
    assert load["retrieved_bytes"] == 20 * 24 * 2 * 196 * 2 * 64 * 2  # 20 retrieved: each block in each layer
    for key in ("write_s", "open_s", "read_s"):
        assert math.isfinite(load[key]) and load[key] > 0, key
