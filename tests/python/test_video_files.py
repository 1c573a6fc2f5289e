"""Real encoded files, made here by the static ffmpeg of `imageio-ffmpeg`, read by `svqa frames` and
compared with PyAV at the same frames: H.264, HEVC, VP9 and MPEG-4; constant and variable rate,
dropped frames, a start time past 0, odd sizes, yuv420p and yuv444p, a file cut short; rotation
(display matrix 90/180/270, a flip) against ffmpeg's own autorotated frames. Each file lasts 2-3 s
at under 100x100 pixels."""

import json
import math
import subprocess

import numpy as np
import pytest

av = pytest.importorskip("av")
imageio_ffmpeg = pytest.importorskip("imageio_ffmpeg")
FFMPEG = imageio_ffmpeg.get_ffmpeg_exe()

# A moving test card, cropped to odd sizes after the pixel format is set (so nothing rounds them).
SOURCE = ["-f", "lavfi", "-i", "testsrc2=size=96x64:rate={rate}:duration={seconds}"]

# name: (ffmpeg output arguments, rate, seconds, filter before the encoder)
FILES = {
    # constant rate, odd size, full chroma: every pixel comparable
    "h264_444.mp4": (["-c:v", "libx264", "-pix_fmt", "yuv444p", "-crf", "20"], 30, 2, "format=yuv444p,crop=85:47"),
    # 30 fps for 1 s, then 15 fps (every other frame dropped)
    "vfr_h264.mp4": (["-c:v", "libx264", "-pix_fmt", "yuv420p", "-fps_mode", "vfr"], 30, 2,
                     "select='lt(t\\,1)+not(mod(n\\,2))'"),
    # 1.2 s of frames dropped
    "dropped_hevc.mkv": (["-c:v", "libx265", "-pix_fmt", "yuv420p", "-x265-params", "log-level=error",
                          "-fps_mode", "vfr"], 25, 3, "select='not(between(t\\,0.6\\,1.8))'"),
    "vp9.webm": (["-c:v", "libvpx-vp9", "-pix_fmt", "yuv420p", "-deadline", "realtime"], 25, 2, "crop=64:48"),
    # MPEG-4 part 2 in MPEG-TS: the stream starts past 0; odd size, subsampled chroma
    "mpeg4.ts": (["-c:v", "mpeg4", "-pix_fmt", "yuv420p", "-q:v", "3"], 24, 2, "format=yuv420p,crop=85:47"),
    # a start time of 2.5 s in Matroska
    "offset_h264.mkv": (["-c:v", "libx264", "-pix_fmt", "yuv444p", "-output_ts_offset", "2.5"], 30, 2,
                        "format=yuv444p,crop=63:41"),
}
# name: arguments before -i that set the display matrix (stream copy of h264_444.mp4)
ROTATED = {
    "rot90.mp4": ["-display_rotation", "90"],
    "rot180.mp4": ["-display_rotation", "180"],
    "rot270.mp4": ["-display_rotation", "270"],
    "rot90_hflip.mp4": ["-display_rotation", "90", "-display_hflip"],
    "vflip.mp4": ["-display_vflip"],
}


def ffmpeg(*args):
    subprocess.run([FFMPEG, "-hide_banner", "-loglevel", "error", "-y", *map(str, args)], check=True,
                   capture_output=True, timeout=120)


@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    d = tmp_path_factory.mktemp("videos")
    for name, (args, rate, seconds, vf) in FILES.items():
        source = [a.format(rate=rate, seconds=seconds) for a in SOURCE]
        ffmpeg(*source, "-vf", vf, *args, d / name)
    for name, before in ROTATED.items():
        ffmpeg(*before, "-i", d / "h264_444.mp4", "-c", "copy", d / name)
    whole = (d / "vfr_h264.mp4").read_bytes()
    ffmpeg("-i", d / "vfr_h264.mp4", "-c", "copy", d / "whole.mkv")
    data = (d / "whole.mkv").read_bytes()
    (d / "truncated.mkv").write_bytes(data[: len(data) * 3 // 5])
    assert whole
    return d


def pyav_frames(path):
    """Every frame PyAV decodes: (PTS in s from the stream's start, RGB)."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        start = stream.start_time or 0
        out = []
        try:
            for frame in container.decode(stream):
                out.append((float((frame.pts - start) * stream.time_base), frame.to_ndarray(format="rgb24")))
        except av.error.InvalidDataError:  # a file cut short: what was decoded
            pass
        return out, float(stream.average_rate or stream.guessed_rate or 0)


def presented_indices(pts, fps):
    """The frames the true rule keeps: for each k, the first frame presented at or after k / fps."""
    keep = []
    for k in range(int(math.ceil(pts[-1] * fps)) + 1):
        first = next((i for i, p in enumerate(pts) if p >= k / fps - 1e-9), None)
        if first is not None and (not keep or keep[-1] != first):
            keep.append(first)
    return keep


def ffmpeg_rgb(path, width, height):
    """ffmpeg's own frames, autorotated (its default), as RGB."""
    raw = subprocess.run([FFMPEG, "-v", "error", "-i", str(path), "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                         check=True, capture_output=True, timeout=60).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, height, width, 3)


def svqa_frames(svqa_bin, root, path, out, *args):
    r = subprocess.run([str(svqa_bin), "frames", str(path), "--out", str(out), *map(str, args)], cwd=root,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    return json.loads(r.stdout), np.load(out)


# Pixels: exact where the chroma is full; with subsampled chroma the swscale of Debian 12's FFmpeg 5.1
# (svqa's) and that of PyAV's wheel round the chroma upsampling differently, by a level or two.
EXACT = {"h264_444.mp4", "offset_h264.mkv"}


@pytest.mark.parametrize("name", [*FILES, "truncated.mkv"])
@pytest.mark.parametrize("fps", [2, 7])
def test_presented_rule_matches_pyav(svqa_bin, root, videos, tmp_path, name, fps):
    frames, _ = pyav_frames(videos / name)
    pts = [p for p, _ in frames]
    report, rgb = svqa_frames(svqa_bin, root, videos / name, tmp_path / "rgb.npy", "--fps", fps)
    keep = presented_indices(pts, fps)
    assert report["frames"] == len(keep) == len(rgb)
    assert report["timestamps"] == pytest.approx([pts[i] for i in keep], abs=1e-3)
    assert "presented" not in report  # the timestamps are the PTS
    expected = np.stack([frames[i][1] for i in keep])
    assert rgb.shape == expected.shape
    diff = np.abs(rgb.astype(int) - expected)
    if name in EXACT:
        assert diff.max() == 0
    else:
        assert diff.max() <= 3 and np.mean(diff) < 1.0, (diff.max(), np.mean(diff))


@pytest.mark.parametrize("name", ["vfr_h264.mp4", "dropped_hevc.mkv"])
def test_decode_threads_change_nothing_but_speed(svqa_bin, root, videos, tmp_path, name):
    """`svqa run` on the CPU decodes with the cores its model leaves (often one thread): the same frames."""
    auto, auto_rgb = svqa_frames(svqa_bin, root, videos / name, tmp_path / "auto.npy", "--fps", 7)
    one, one_rgb = svqa_frames(svqa_bin, root, videos / name, tmp_path / "one.npy", "--fps", 7, "--decode-threads", 1)
    assert one == auto and np.array_equal(one_rgb, auto_rgb)
    r = subprocess.run([str(svqa_bin), "frames", str(videos / name), "--decode-threads", "65"], cwd=root,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "--decode-threads: expected 0 to 64" in r.stderr


def test_files_are_what_they_claim(videos):
    """The test set itself: variable rate, a gap, a start time past 0, a file cut short."""
    vfr, _ = pyav_frames(videos / "vfr_h264.mp4")
    gaps = np.diff([p for p, _ in vfr])
    assert gaps.min() == pytest.approx(1 / 30, abs=1e-3) and gaps.max() == pytest.approx(1 / 15, abs=1e-3)
    dropped, _ = pyav_frames(videos / "dropped_hevc.mkv")
    assert np.diff([p for p, _ in dropped]).max() > 1.0
    with av.open(str(videos / "offset_h264.mkv")) as c:
        s = c.streams.video[0]
        assert float(s.start_time * s.time_base) == pytest.approx(2.5, abs=0.01)
    truncated, _ = pyav_frames(videos / "truncated.mkv")
    assert 0 < len(truncated) < len(vfr)


@pytest.mark.parametrize("name", ["vfr_h264.mp4", "dropped_hevc.mkv"])
def test_stride_rule_stamps_by_index_and_reports_pts(svqa_bin, root, videos, tmp_path, name):
    """ReKV's rule on a variable-rate file: every step-th decoded frame, stamped index / avg_fps,
    with the frames' PTS beside the stamps (what a run's future_s is made of)."""
    frames, avg_fps = pyav_frames(videos / name)
    report, rgb = svqa_frames(svqa_bin, root, videos / name, tmp_path / "rgb.npy", "--fps", 1, "--frame-times", "stride")
    step = max(1, int(round(avg_fps) / 1))
    kept = list(range(0, len(frames), step))
    assert report["frames"] == len(kept) == len(rgb)
    assert report["timestamps"] == pytest.approx([i / avg_fps for i in kept], abs=1e-9)
    assert report["presented"] == pytest.approx([frames[i][0] for i in kept], abs=1e-3)
    assert max(abs(p - t) for p, t in zip(report["presented"], report["timestamps"])) > 0.2  # stamps are not times


@pytest.mark.parametrize("name", list(ROTATED))
def test_rotation_equals_ffmpeg_autorotate(svqa_bin, root, videos, tmp_path, name):
    report, rgb = svqa_frames(svqa_bin, root, videos / name, tmp_path / "rgb.npy", "--fps", 30)
    turned = "rot90" in name or "rot270" in name
    height, width = (85, 47) if turned else (47, 85)
    expected = ffmpeg_rgb(videos / name, width, height)
    assert (report["height"], report["width"]) == (height, width)
    assert rgb.shape == expected.shape
    assert np.abs(rgb.astype(int) - expected).max() == 0  # yuv444p: every pixel exact


def stream_run(svqa_bin, root, tiny_export, tmp_path, video, times, frame_times):
    """`svqa run` of the tiny LLaVA-OV export over `video`, questions at `times`: (records by time, log)."""
    questions = [{"id": f"q{i}", "time": t, "question": "What is shown?", "options": ["a", "b"], "answer": "a"}
                 for i, t in enumerate(times)]
    (tmp_path / "streams.json").write_text(json.dumps({"streams": [{"id": "v", "video": str(video),
                                                                    "questions": questions}]}))
    (tmp_path / "exp.yaml").write_text(f"""
name: real_file
backbone: {{type: torchscript, options: {{export: {tiny_export('llava_onevision')}}}}}
encoding: {{type: rekv_sliding_window, options: {{n_local: 200}}}}
retrieval: {{type: internal, options: {{retrieve_size: 2}}}}
benchmark: {{type: stream_list, options: {{annotations: {tmp_path / 'streams.json'}}}}}
stream: {{fps: 2, chunk_frames: 4, max_new_tokens: 2, frame_times: {frame_times}}}
output: {{dir: {tmp_path / 'results'}}}
""")
    r = subprocess.run([str(svqa_bin), "run", str(tmp_path / "exp.yaml")], cwd=root, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    lines = (tmp_path / "results" / "real_file" / "predictions.jsonl").read_text().splitlines()
    return {rec["time"]: rec for rec in map(json.loads, lines)}, r.stdout


TIMES = [0.6, 1.2, 1.5, 2.0, 2.9]


def svqa_report(svqa_bin, root, results):
    r = subprocess.run([str(svqa_bin), "report", str(results), "--no-figures"], cwd=root, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r


def test_run_under_the_presented_rule_never_sees_a_later_frame(svqa_bin, root, tiny_export, videos, tmp_path):
    frames, _ = pyav_frames(videos / "dropped_hevc.mkv")
    pts = [p for p, _ in frames]
    kept = [pts[i] for i in presented_indices(pts, 2)]
    records, log = stream_run(svqa_bin, root, tiny_export, tmp_path, videos / "dropped_hevc.mkv", TIMES, "presented")
    for t in TIMES:
        rec = records[t]
        assert rec["frames_encoded"] == sum(p < t for p in kept), t  # every frame shown before t, no other
        assert rec["future_s"] == 0
        assert all(end < t for _, end in rec["block_spans"].values()), t
    assert "warning" not in log
    report = svqa_report(svqa_bin, root, tmp_path / "results")
    assert "Frames presented after the question" not in report.stdout and "warning" not in report.stderr


def test_run_under_the_stride_rule_states_future_s_from_the_pts(svqa_bin, root, tiny_export, videos, tmp_path):
    """ReKV's rule over 1.2 s of dropped frames: frame 24 is stamped 0.96 s and shown at 2.2 s; a
    question at 1.5 s uses it. future_s is what the file's PTS give, and the run warns once."""
    frames, avg_fps = pyav_frames(videos / "dropped_hevc.mkv")
    step = int(round(avg_fps) / 2)
    kept_pts = [frames[i][0] for i in range(0, len(frames), step)]
    # The stride rule's stream ends at its last stamp (1.44 s) plus a frame interval: questions before 1.92 s.
    times = [0.6, 1.2, 1.5, 1.8]
    records, log = stream_run(svqa_bin, root, tiny_export, tmp_path, videos / "dropped_hevc.mkv", times, "stride")
    futures = []
    for t in times:
        used = kept_pts[: min(int(t * 2), len(kept_pts))]  # [0, int(t * fps)) by index
        assert records[t]["frames_encoded"] == len(used)
        expected = max(0.0, max(used) - t) if used else 0.0
        assert records[t]["future_s"] == pytest.approx(expected, abs=1e-3), t
        futures.append(expected)
    assert max(futures) > 0.5  # more than a frame interval: the file does leak under this rule
    assert log.count("warning: v/") == 1 and "future_s" in log
    # svqa report names the run, how many answers saw the future, how far, and the first.
    leaks = sorted(t for t in times if records[t]["future_s"] > 0)
    most = max(records[t]["future_s"] for t in times)
    line = (f"real_file: {len(leaks)} of {len(times)} answered questions used frames presented after the question "
            f"(up to {most:.3f} s; first v/q{times.index(leaks[0])} at {leaks[0]:g} s)")
    report = svqa_report(svqa_bin, root, tmp_path / "results")
    assert "## Frames presented after the question" in report.stdout and f"- {line}\n" in report.stdout
    assert f"svqa report: warning: {line}\n" in report.stderr


# ---- qwen-vl-utils' frame rule (stream.frame_step: qwen_smart) on real files ---------------------

# name: (rate, seconds, size): five constant-rate MP4s (their frame count stated, as the reference reads it)
QWEN_FILES = {"q30.mp4": ("30", 3, "85:47"), "q25.mp4": ("25", 4, "64:48"), "q24.mp4": ("24", 5, "96:64"),
              "q2997.mp4": ("30000/1001", 3, "63:41"), "q60.mp4": ("60", 2, "50:30")}


def qwen_reference():
    """tests/fixtures/qwen_frames/make_cases.py: the Python transcription of qwen-vl-utils' fetch_video
    (smart_nframes, the readers' linspace indices, the pixel bounds, smart_resize)."""
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).parents[1] / "fixtures/qwen_frames/make_cases.py"
    spec = importlib.util.spec_from_file_location("qwen_make_cases", path)
    cases = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cases)
    return cases


def qwen_reference_indices(total_frames, video_fps, fps):
    """qwen-vl-utils' fetch_video indices: smart_nframes, then linspace(0, total - 1, n).round()."""
    import torch
    n = qwen_reference().smart_nframes(fps, total_frames, video_fps)
    return torch.linspace(0, total_frames - 1, n).round().long().tolist()


# The export's "image" object and backbone.options.video_resize's qwen_vl_utils bounds, one per file in turn,
# so that each of smart_resize's branches runs: frames scaled up to min_pixels (the releases' defaults), down
# to the per-clip budget total_pixels / n · 2, down to the caller's max_pixels.
QWEN_IMAGES = {
    "qwen2_5_vl": dict(resize="qwen_smart", min_pixels=3136, max_pixels=12845056, patch_size=14, merge_size=2,
                       temporal_patch_size=2),
    "qwen3_vl": dict(resize="qwen3_smart", min_pixels=4096, max_pixels=25165824, patch_size=16, merge_size=2,
                     temporal_patch_size=2),
}
QWEN_PIXELS = [("qwen2_5_vl", {}), ("qwen3_vl", {}), ("qwen2_5_vl", {"min_pixels": 784, "total_pixels": 12000}),
               ("qwen3_vl", {"min_pixels": 1024, "max_pixels": 2048}),
               ("qwen3_vl", {"min_pixels": 1024, "total_pixels": 15000.5})]


def qwen_reference_size(release, pixels, nframes, height, width):
    """fetch_video's (height, width) for the clip, then the processor's: Qwen2.5-VL's smart_resize within its
    own bounds (a frame fetch_video left under min_pixels grows again), Qwen3-VL's called with do_resize=False."""
    cases = qwen_reference()
    size = cases.fetch_video_size(nframes, height, width, release, pixels.get("max_pixels"), pixels.get("min_pixels"),
                                  pixels.get("total_pixels"))
    if release == "qwen3_vl":
        return size
    image = QWEN_IMAGES[release]
    return cases.smart_resize(*size, image["patch_size"] * image["merge_size"], image["min_pixels"], image["max_pixels"])


@pytest.mark.parametrize("fps", [2.0, 4.0])
def test_qwen_smart_keeps_the_references_frame_indices_and_sizes(svqa_bin, root, tmp_path, fps):
    """stream.frame_step qwen_smart and backbone.options.video_resize qwen_vl_utils on five real MP4s of
    different rates and sizes: the frames kept, their rate, and the size each is resized to are what
    qwen-vl-utils gives (the transcription); `svqa frames --preprocess` sizes them as a run does."""
    for (name, (rate, seconds, size)), (release, pixels) in zip(QWEN_FILES.items(), QWEN_PIXELS):
        path = tmp_path / name
        ffmpeg("-f", "lavfi", "-i", f"testsrc2=size=96x64:rate={rate}:duration={seconds}", "-vf", f"crop={size}",
               "-c:v", "libx264", "-pix_fmt", "yuv444p", path)
        frames, avg_fps = pyav_frames(path)
        with av.open(str(path)) as container:
            assert container.streams.video[0].frames == len(frames)  # the stated count is the decoded one
        reference = qwen_reference_indices(len(frames), avg_fps, fps)
        want = sorted(set(reference))
        report, rgb = svqa_frames(svqa_bin, root, path, tmp_path / "rgb.npy", "--fps", fps, "--frame-times", "stride",
                                  "--frame-step", "qwen_smart")
        assert [round(t * avg_fps) for t in report["timestamps"]] == want, name
        assert report["presented"] == pytest.approx([frames[i][0] for i in want], abs=1e-3), name
        assert np.array_equal(rgb, np.stack([frames[i][1] for i in want])), name
        assert report["fps"] == fps, name  # the rate the reference's positions space its frames by
        report, _ = svqa_frames(svqa_bin, root, path, tmp_path / "rgb.npy", "--fps", fps, "--frame-step", "qwen_smart")
        assert report["timestamps"] == pytest.approx([frames[i][0] for i in want], abs=1e-3), name  # by PTS

        image = {**QWEN_IMAGES[release], "qwen_vl_utils": pixels}
        (tmp_path / "manifest.json").write_text(json.dumps({"image": image}))
        report, _ = svqa_frames(svqa_bin, root, path, tmp_path / "pixels.npy", "--fps", fps, "--frame-step",
                                "qwen_smart", "--preprocess", tmp_path / "manifest.json")
        height, width = qwen_reference_size(release, pixels, len(reference), report["height"], report["width"])
        patch = image["patch_size"]
        assert report["grid_thw"] == [math.ceil(len(want) / 2), height // patch, width // patch], (name, release, pixels)
