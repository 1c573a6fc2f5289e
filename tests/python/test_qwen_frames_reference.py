"""The videos tests/test_frame_indices.cpp holds svqa's qwen_smart frame indices and sizes to, and what
qwen-vl-utils gives on them, are the output of the Python transcription of the reference in
tests/fixtures/qwen_frames/make_cases.py."""

import json
import subprocess
import sys


def test_qwen_frame_cases_are_the_python_transcriptions_output(root):
    script = root / "tests/fixtures/qwen_frames/make_cases.py"
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True).stdout
    committed = json.loads((root / "tests/fixtures/qwen_frames/cases.json").read_text())
    assert json.loads(out) == committed
    assert len({(c["total_frames"], c["video_fps"], c["height"], c["width"]) for c in committed}) >= 5
