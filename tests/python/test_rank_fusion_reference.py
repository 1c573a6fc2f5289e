"""The reciprocal-rank-fusion cases that tests/test_rank_fusion.cpp holds the C++ fusion to are the
output of the Python transcription of the formula in tests/fixtures/rrf/make_cases.py."""

import json
import subprocess
import sys


def test_rrf_cases_are_the_python_transcriptions_output(root):
    script = root / "tests/fixtures/rrf/make_cases.py"
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True).stdout
    committed = json.loads((root / "tests/fixtures/rrf/cases.json").read_text())
    assert json.loads(out) == committed
    assert len(committed) >= 100
    assert any(None in c["external"] for c in committed), "some items must be missing from a ranking"
    assert any(len(set(c["internal"])) < len(c["internal"]) for c in committed), "ties must occur"
