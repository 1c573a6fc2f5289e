"""The planted caches tests/test_infinipot_v.cpp holds svqa's InfiniPot-V compaction to, and the
tokens kept from them, are the output of the Python transcription of the reference code
(infinipot_v_reference.py) in tests/fixtures/infinipot_v/make_cases.py."""

import json
import subprocess
import sys


def test_infinipot_v_cases_are_the_python_transcriptions_output(root):
    script = root / "tests/fixtures/infinipot_v/make_cases.py"
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True).stdout
    committed = json.loads((root / "tests/fixtures/infinipot_v/cases.json").read_text())
    assert json.loads(out) == committed
    names = {c["name"] for c in committed}
    assert {"no_pooling", "pool_2d_size7", "pool_1d_size3", "tar_only", "van_only"} <= names
    for c in committed:  # make_cases.py asserts it too: what is planted is kept
        assert set(c["novel"]) | set(c["loud"]) <= set(c["kept"]), c["name"]
        assert len(c["kept"]) == c["keep_frames"] * c["tokens_per_frame"]
