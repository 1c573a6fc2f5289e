"""`svqa frames`: video files sampled by their presentation times (the default: the first frame at or
after each k / fps, stamped with its PTS) or by the ReKV rule (`--frame-times stride`: every
int(round(avg_fps) / fps)-th frame from frame 0, Python rounding; timestamp = index / avg_fps;
`--frame-step nearest`: round(avg_fps / fps)), .npy frames and image directories taken as already
sampled (timestamp = i / fps), and one-line errors for bad sources. Encoded files: test_video_files.py."""

import json
import pathlib
import subprocess

import numpy as np
import pytest

from raw_avi import numbered_frames, write_avi


def svqa_frames(svqa_bin, root, *args):
    return subprocess.run([str(svqa_bin), "frames", *map(str, args)], cwd=root, capture_output=True, text=True,
                          timeout=60)


def frames_ok(svqa_bin, root, *args):
    r = svqa_frames(svqa_bin, root, *args)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    return json.loads(r.stdout)


def rekv_stride(avg_fps, sample_fps):
    """ReKV video_qa/base.py load_video, transcribed: fps = round(vr.get_avg_fps()); range(0, len(vr), int(fps / sample_fps))."""
    fps = round(avg_fps)
    return int(fps / sample_fps)


@pytest.mark.parametrize("rate, scale, count, fps, rule, step", [
    (25, 1, 23, 10, "nearest", 2),        # 2.5 rounds to even: 2
    (30, 1, 41, 4, "nearest", 8),         # 7.5 rounds to even: 8
    (30, 1, 41, 4, "reference", 7),       # int(30 / 4)
    (30, 1, 65, 1, "nearest", 30),
    (30000, 1001, 65, 2, "nearest", 15),  # 29.97 fps: 14.985 → 15
    (24, 1, 50, 0.5, "nearest", 48),
    (25, 1, 23, 100, "nearest", 1),       # faster than the video: every frame (step at least 1)
    (25, 1, 23, 100, "reference", 1),
    (25, 2, 60, 0.5, "nearest", 25),      # 12.5 fps: round(25.0) = 25, where ReKV takes int(12 / 0.5) = 24
])
def test_video_keeps_every_step_th_frame(svqa_bin, root, tmp_path, rate, scale, count, fps, rule, step):
    avg_fps = rate / scale
    if rule == "nearest":
        assert step == max(1, round(avg_fps / fps))  # Python's round
    else:
        assert step == max(1, rekv_stride(avg_fps, fps))
    frames = numbered_frames(count)
    write_avi(tmp_path / "v.avi", frames, rate, scale)
    report = frames_ok(svqa_bin, root, tmp_path / "v.avi", "--fps", fps, "--frame-times", "stride", "--frame-step", rule,
                       "--out", tmp_path / "rgb.npy")
    kept = list(range(0, count, step))
    assert (report["frames"], report["height"], report["width"]) == (len(kept), 24, 32)
    assert report["timestamps"] == pytest.approx([i / avg_fps for i in kept], abs=1e-9)
    assert report["fps"] == pytest.approx(avg_fps / step)
    rgb = np.load(tmp_path / "rgb.npy")
    assert rgb.dtype == np.uint8 and np.array_equal(rgb, frames[kept])  # lossless video: the very frames


# (rate, scale) of 12.5, 24, 25, 29.97, 30 and 60 fps videos.
VIDEO_RATES = [(25, 2), (24, 1), (25, 1), (30000, 1001), (30, 1), (60, 1)]


@pytest.mark.parametrize("rate, scale", VIDEO_RATES)
@pytest.mark.parametrize("fps", [0.5, 1, 2])
def test_stride_rule_is_rekvs(svqa_bin, root, tmp_path, rate, scale, fps):
    """--frame-times stride samples with ReKV's very stride (the frames it keeps, not only their count),
    and reports each kept frame's presentation time beside its stamp."""
    avg_fps = rate / scale
    stride = rekv_stride(avg_fps, fps)
    count = 3 * stride + 2
    write_avi(tmp_path / "v.avi", numbered_frames(count), rate, scale)
    report = frames_ok(svqa_bin, root, tmp_path / "v.avi", "--fps", fps, "--frame-times", "stride")
    assert report["timestamps"] == pytest.approx([i / avg_fps for i in range(0, count, stride)], abs=1e-9)
    assert report["presented"] == pytest.approx(report["timestamps"], abs=1e-9)  # constant rate: the same


@pytest.mark.parametrize("rate, scale", VIDEO_RATES)
@pytest.mark.parametrize("fps", [0.5, 1, 3])
def test_default_keeps_the_first_frame_presented_at_or_after_each_k_over_fps(svqa_bin, root, tmp_path, rate, scale, fps):
    """At 29.97 fps ReKV's stride keeps every 30th frame and stamps it k s, while it is shown at 1.001 k s;
    the default keeps frame ceil(k · avg_fps / fps) and stamps it with its PTS."""
    avg_fps = rate / scale
    count = int(4 * avg_fps / fps) + 3
    frames = numbered_frames(count)
    write_avi(tmp_path / "v.avi", frames, rate, scale)
    report = frames_ok(svqa_bin, root, tmp_path / "v.avi", "--fps", fps, "--out", tmp_path / "rgb.npy")
    pts = [i * scale / rate for i in range(count)]
    kept = sorted({next(i for i, p in enumerate(pts) if p >= k / fps - 1e-9) for k in range(int(pts[-1] * fps) + 1)})
    assert report["timestamps"] == pytest.approx([pts[i] for i in kept], abs=1e-9)
    assert np.array_equal(np.load(tmp_path / "rgb.npy"), frames[kept])


def test_npy_frames_are_already_sampled(svqa_bin, root, tmp_path):
    frames = np.random.default_rng(0).integers(0, 256, (5, 6, 10, 3), dtype=np.uint8)
    np.save(tmp_path / "f.npy", frames)
    report = frames_ok(svqa_bin, root, tmp_path / "f.npy", "--fps", 0.5, "--out", tmp_path / "back.npy")
    assert (report["frames"], report["height"], report["width"], report["fps"]) == (5, 6, 10, 0.5)
    assert report["timestamps"] == [0.0, 2.0, 4.0, 6.0, 8.0]
    assert np.array_equal(np.load(tmp_path / "back.npy"), frames)


def write_ppm(path, rgb):
    h, w, _ = rgb.shape
    path.write_bytes(b"P6\n%d %d\n255\n" % (w, h) + rgb.tobytes())


def test_image_directory_sorted_by_name(svqa_bin, root, tmp_path):
    frames = numbered_frames(3, 8, 12)
    for name, i in [("frame_002.ppm", 2), ("frame_000.ppm", 0), ("frame_001.PPM", 1)]:
        write_ppm(tmp_path / name, frames[i])
    (tmp_path / "frame_003.pgm").write_bytes(b"P5\n12 8\n255\n" + bytes([77]) * 96)  # gray: 3 equal channels
    (tmp_path / "notes.txt").write_text("not an image")
    write_ppm(tmp_path / ".hidden.ppm", frames[0])
    report = frames_ok(svqa_bin, root, tmp_path, "--fps", 2, "--out", tmp_path / "rgb.npy")
    assert (report["frames"], report["height"], report["width"]) == (4, 8, 12)
    assert report["timestamps"] == [0.0, 0.5, 1.0, 1.5]
    rgb = np.load(tmp_path / "rgb.npy")
    assert np.array_equal(rgb[:3], frames) and (rgb[3] == 77).all()


def error_of(svqa_bin, root, *args):
    r = svqa_frames(svqa_bin, root, *args)
    assert r.returncode == 1, r.stderr
    assert r.stdout == "" and r.stderr.count("\n") == 1, r.stderr
    return r.stderr


def test_missing_and_corrupt_videos(svqa_bin, root, tmp_path):
    missing = tmp_path / "nope.mp4"
    assert error_of(svqa_bin, root, missing) == f"svqa frames: error: {missing}: file not found\n"
    corrupt = tmp_path / "corrupt.mp4"
    corrupt.write_bytes(np.random.default_rng(1).integers(0, 256, 20000, dtype=np.uint8).tobytes())
    assert error_of(svqa_bin, root, corrupt) == \
        f"svqa frames: error: {corrupt}: cannot open as a video (expected a file FFmpeg can decode)\n"
    empty = tmp_path / "empty.avi"
    write_avi(empty, numbered_frames(0), 25)
    assert error_of(svqa_bin, root, empty) == \
        f"svqa frames: error: {empty}: no frame could be decoded (expected a video; is the file corrupt?)\n"


@pytest.mark.parametrize("array, message", [
    (np.zeros((2, 8, 8, 3), np.float32), "expected uint8 frames [N, H, W, 3] (RGB, N, H, W >= 1), got float32 [2, 8, 8, 3]"),
    (np.zeros((2, 8, 8), np.uint8), "expected uint8 frames [N, H, W, 3] (RGB, N, H, W >= 1), got uint8 [2, 8, 8]"),
    (np.zeros((0, 8, 8, 3), np.uint8), "expected uint8 frames [N, H, W, 3] (RGB, N, H, W >= 1), got uint8 [0, 8, 8, 3]"),
    (np.zeros((2, 8, 8, 3), np.float64),
     "dtype '<f8' is not supported (expected uint8 '|u1', float32 '<f4' or int64 '<i8')"),
    (np.asfortranarray(np.zeros((2, 8, 8, 3), np.uint8)), "Fortran-order arrays are not supported"),
])
def test_bad_npy(svqa_bin, root, tmp_path, array, message):
    np.save(tmp_path / "f.npy", array)
    path = tmp_path / "f.npy"
    assert error_of(svqa_bin, root, path).startswith(f"svqa frames: error: {path}: {message}")


def test_broken_npy_files(svqa_bin, root, tmp_path):
    bad = tmp_path / "bad.npy"
    bad.write_bytes(b"not numpy at all")
    assert error_of(svqa_bin, root, bad) == f"svqa frames: error: {bad}: not a .npy file (no \\x93NUMPY magic)\n"
    np.save(bad, np.zeros((2, 8, 8, 3), np.uint8))
    bad.write_bytes(bad.read_bytes()[:-10])
    assert error_of(svqa_bin, root, bad) == \
        f"svqa frames: error: {bad}: truncated: the header promises 384 bytes of data, the file has 374\n"


NPY_FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "npy"


@pytest.mark.parametrize("name, message", [
    # The audit: a 30 TB allocation (ASan: allocation-size-too-big) before the size was checked.
    ("huge_shape.npy", "truncated: the header promises 30000000000000 bytes of data, the file has 64"),
    ("overflow_shape.npy", "npy header: shape [99999999999, 99999999999, 99999999999, 3] holds more than 2^63 bytes"),
    ("dimension_past_int64.npy",
     "npy header: 'shape' (99999999999999999999, 8, 8, 3) must hold non-negative integers below 2^63"),
    ("negative_dim.npy", "npy header: 'shape' (-2, 8, 8, 3) must hold non-negative integers below 2^63"),
    ("huge_header_len.npy", "truncated npy header: it claims 4294967280 bytes, the file has 322 in all"),
    ("zero_height.npy", "expected uint8 frames [N, H, W, 3] (RGB, N, H, W >= 1), got uint8 [2, 0, 8, 3]"),
])
def test_hostile_npy_headers_are_one_line_errors(svqa_bin, root, name, message):
    path = NPY_FIXTURES / name
    assert error_of(svqa_bin, root, path) == f"svqa frames: error: {path}: {message}\n"


def test_bad_image_directories(svqa_bin, root, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no image files" in error_of(svqa_bin, root, empty)
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    write_ppm(mixed / "a.ppm", numbered_frames(1, 8, 12)[0])
    write_ppm(mixed / "b.ppm", numbered_frames(1, 10, 12)[0])
    assert error_of(svqa_bin, root, mixed) == \
        f"svqa frames: error: {mixed / 'b.ppm'}: image is 12x10, expected 12x8 as a.ppm (all frames one size)\n"
    (mixed / "b.ppm").write_bytes(b"garbage")
    assert error_of(svqa_bin, root, mixed) == f"svqa frames: error: {mixed / 'b.ppm'}: cannot decode the image\n"


def test_usage_errors(svqa_bin, root, tmp_path):
    np.save(tmp_path / "f.npy", np.zeros((1, 8, 8, 3), np.uint8))
    r = svqa_frames(svqa_bin, root, tmp_path / "f.npy", "--fps", 0)
    assert (r.returncode, r.stderr) == (2, "svqa frames: --fps must be positive\n")
    r = svqa_frames(svqa_bin, root)
    assert r.returncode == 2 and "missing the source" in r.stderr
    r = subprocess.run([str(svqa_bin), "frams"], cwd=root, capture_output=True, text=True)
    assert r.returncode == 2 and "did you mean 'frames'?" in r.stderr
