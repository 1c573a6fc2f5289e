import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def svqa_bin():
    path = pathlib.Path(os.environ.get("SVQA_BIN", ROOT / "build" / "bin" / "svqa"))
    if not path.exists():
        pytest.fail(f"{path} not found: build first (scripts/build.sh) or set SVQA_BIN")
    return path


@pytest.fixture(scope="session")
def root():
    return ROOT
