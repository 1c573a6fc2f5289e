"""The speed harness's smoke run (benchmarks/speed/bench.py --quick): it runs end to end and its
report has every field the table shows. No speed is checked here: timings live in the harness."""

import json
import math
import pathlib
import subprocess
import sys

import pytest


@pytest.fixture(scope="module")
def quick(root, svqa_bin, tmp_path_factory):
    bench = svqa_bin.parent / "svqa_bench"
    if not bench.exists():
        pytest.fail(f"{bench} not found: build first (scripts/build.sh)")
    saved = tmp_path_factory.mktemp("bench") / "report.json"
    cmd = [sys.executable, root / "benchmarks" / "speed" / "bench.py", "--quick", "--mukv", "--build",
           svqa_bin.parent.parent, "--save", saved]
    table = subprocess.run(cmd, capture_output=True, text=True, cwd=root)
    assert table.returncode == 0, table.stderr
    return table.stdout, json.loads(saved.read_text())


def positive(x):
    return isinstance(x, (int, float)) and math.isfinite(x) and x > 0


def test_report_has_every_field(quick):
    _, report = quick
    s = report["summary"]
    assert set(s["encode"]) == {"window_filling", "window_full"}
    for e in s["encode"].values():
        for key in ("s_per_frame", "floor_s_per_frame", "x_floor", "x_peak", "vision_s_per_frame", "gflops_per_frame", "frames"):
            assert positive(e[key]), key
    assert [r["after_frames"] for r in s["ttft"]] == [4, 8, 12]
    for r in s["ttft"]:
        for key in ("retrieve_s", "gather_s", "prefill_s", "ttft_s", "gather_share", "context_tokens", "floor_s", "x_floor"):
            assert positive(r[key]), key
        assert math.isclose(r["ttft_s"], r["retrieve_s"] + r["gather_s"] + r["prefill_s"], rel_tol=1e-9)
    hf = {r["after_frames"]: r for r in s["ttft"] if r["hf_reprefill_s"] is not None}
    assert sorted(hf) == [4, 8] and all(positive(r["x_hf"]) and positive(r["floor_x_hf"]) and positive(r["peak_x_hf"])
                                        and positive(r["hf_gflops_per_s"]) for r in hf.values())
    # Answering's arithmetic against a re-prefill's: bounded context (r = 4 blocks) against a past that grows.
    flop_ratios = [r["flops_x_hf"] for r in s["ttft"]]
    assert all(positive(x) and x < 1 for x in flop_ratios) and flop_ratios == sorted(flop_ratios, reverse=True)
    for key in ("rss_loaded", "peak_rss", "bank_bytes", "window_bytes", "bank_bytes_per_frame", "x_bank_and_window",
                "kv_gb_per_hour_at_0.5fps"):
        assert positive(s["memory"][key]), key
    assert len(report["measured"]["memory"]["samples"]) == 3  # every 4 of 12 frames
    assert report["measured"]["shape"]["tokens_per_unit"] == 196


def test_table_shows_every_row(quick):
    table, _ = quick
    for row in ("window filling", "window full", "after    4 frames", "after   12 frames", "memory: RSS after loading",
                "GB/hour at 0.5 fps", "load average"):
        assert row in table, row


def test_mukv_beside_rekv_on_the_same_stream(quick):
    table, report = quick
    c = report["mukv"]
    # 196 tokens per frame kept by ReKV; MuKV's paper configuration keeps 767 per 4 frames.
    assert c["rekv"]["memory_tokens_per_300_frames"] == 300 * 196
    assert c["mukv"]["memory_tokens_per_300_frames"] == 75 * 767
    # After 12 frames MuKV brings back 20 of 48 patches, all 12 frames and all 3 segments (+ the sinks).
    n_init = report["measured"]["shape"]["n_init"]
    assert c["mukv"]["context_tokens"] == n_init + 20 * 4 + 12 * 19 + 3 * 627
    for method in ("rekv", "mukv"):
        for key in ("encode_frames_per_s", "llm_frames_per_s", "ttft_s"):
            assert positive(c[method][key]), (method, key)
    assert "memory tokens per 300 frames" in table and "MuKV/ReKV" in table


@pytest.mark.parametrize("shape,unit", [("llava-ov-0.5b", 1), ("qwen2.5-vl-3b", 2)])
def test_real_shape_quick_run_reports_vision_and_llm_against_their_floors(root, svqa_bin, tmp_path, shape, unit):
    """`--shape X --quick`: real widths and the real vocabulary at 2 text and 2 vision layers, a few
    frames; Qwen2.5-VL runs in its 2-frame units; the floor comes from the export (no hf/ in it)."""
    saved = tmp_path / "report.json"
    cmd = [sys.executable, root / "benchmarks" / "speed" / "bench.py", "--shape", shape, "--quick", "--build",
           svqa_bin.parent.parent, "--work", tmp_path, "--save", saved]
    table = subprocess.run(cmd, capture_output=True, text=True, cwd=root)
    assert table.returncode == 0, table.stderr
    report = json.loads(saved.read_text())
    measured, s = report["measured"], report["summary"]
    assert not (pathlib.Path(measured["settings"]["export"]) / "hf").exists()
    assert measured["shape"]["frames_per_unit"] == unit and measured["shape"]["tokens_per_unit"] == 196
    assert len(measured["frames"]) == 4 // unit
    for e in s["encode"].values():
        for key in ("s_per_frame", "x_floor", "vision_s_per_frame", "vision_floor_s_per_frame", "vision_x_floor"):
            assert positive(e[key]), key
    assert [r["after_frames"] for r in s["ttft"]] == [2, 4]
    assert positive(s["ttft"][0]["hf_reprefill_s"])
    assert positive(s["memory"]["weights_bytes"]) and positive(s["memory"]["x_weights_bank_and_window"])
    assert positive(s["memory"]["vision"]["x_one_plus_features"])
    assert "vision call:" in table.stdout and "× floor" in table.stdout


@pytest.mark.parametrize("args, error", [
    (["--frames", "0"], "--frames: expected 1 to 1000000, got 0"),
    (["--fps", "0"], "--fps: expected a rate above 0, at most 1000, got 0.0"),
    (["--fps", "2000"], "--fps: expected a rate above 0, at most 1000, got 2000.0"),
    (["--dtype", "int8"], "--dtype: expected float32, float16 or bfloat16 (or none: the export's), got int8"),
    (["--device", "cuda:99999999999999999999"], "--device: expected cpu, cuda, cuda:N (N < 128) or mps"),
    (["--ttft-repeats", "0"], "--ttft-repeats: expected 1 to 1000, got 0"),
    (["stray"], "unexpected argument 'stray'"),
])
def test_svqa_bench_refuses_options_out_of_bounds_before_loading(svqa_bin, tmp_path, args, error):
    bench = svqa_bin.parent / "svqa_bench"
    r = subprocess.run([bench, "--export", tmp_path / "no-export", *args], capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stdout) == (1, ""), r.stderr
    assert r.stderr.startswith("svqa_bench: " + error), r.stderr


def test_svqa_bench_json_into_a_directory_fails_before_the_run(svqa_bin, tmp_path):
    bench = svqa_bin.parent / "svqa_bench"
    r = subprocess.run([bench, "--export", tmp_path / "no-export", "--json", tmp_path], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 1
    assert r.stderr == f"svqa_bench: --json {tmp_path}: is a directory, expected the file to write\n"


def test_host_work_per_phase(quick):
    """Operator calls per encoded frame and per question by phase (item 1 of issue 37), and no call that
    would wait for a GPU in a frame's LLM and bank work or in a question's retrieval and gather."""
    table, report = quick
    work = report["summary"]["host_work"]
    assert set(work["per_frame"]) == {"window_filling", "window_full"}
    for regime in work["per_frame"].values():
        assert all(positive(regime["ops"][p]) for p in ("vision", "llm", "bank")), regime
        assert regime["syncs"]["llm"] == 0 and regime["syncs"]["bank"] == 0, regime
    assert [q["after_frames"] for q in work["per_question"]] == [4, 8, 12]
    for q in work["per_question"]:
        assert all(positive(q["ops"][p]) for p in ("retrieval", "gather", "prefill")), q
        assert q["syncs"]["retrieval"] == 0 and q["syncs"]["gather"] == 0, q
        assert q["ops"]["other"] == 0, q  # every call of a question falls in a phase
    assert "operator calls/host syncs" in table and "question after 12 frames" in table


def test_against_compares_each_phase(quick):
    """--against's comparison, here of the run with itself: every phase's ratio is 1."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "speed"))
    import bench

    measured = quick[1]["measured"]
    c = bench.compare_against("HEAD", measured, measured)
    assert "encode s/frame, window full" in c["ours_over_theirs"] and "ttft s after 12 frames" in c["ours_over_theirs"]
    assert all(r == 1.0 for r in c["ours_over_theirs"].values())


def test_against_reads_an_older_revisions_json():
    """e5410d4's svqa_bench (what issue 37 compares against) wrote no frames_per_unit and no counts:
    its figures are one frame per unit, compared phase by phase with this tree's."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "speed"))
    import bench

    def measured(scale, new):
        frames = [{"encode_s": 0.2 * scale, "vision_s": 0.05, "window_full": False, "keys": 214},
                  {"encode_s": 0.4 * scale, "vision_s": 0.05, "window_full": True, "keys": 15214}]
        questions = [{"after_frames": 2, "retrieve_s": 0.1 * scale, "gather_s": 0.02, "prefill_s": 0.1, "ttft_s": 0.3}]
        shape = {"layers": 8, "hidden": 512}
        if new:
            shape["frames_per_unit"] = 1
            for row in frames + questions:
                row["counts"] = {"ops": {}, "syncs": {}}
        return {"shape": shape, "frames": frames, "questions": questions}

    c = bench.compare_against("e5410d4", measured(1.0, new=False), measured(0.5, new=True))
    ratios = c["ours_over_theirs"]
    assert ratios["encode s/frame, window filling"] == pytest.approx(0.5)
    assert ratios["encode s/frame, window full"] == pytest.approx(0.5)
    assert ratios["retrieve s after 2 frames"] == pytest.approx(0.5)
    assert ratios["vision s/frame, window full"] == pytest.approx(1.0)
