import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

# A developer's judge settings would make svqa call a real LLM endpoint from any test with
# open-ended questions: tests that judge start their own server and pass it explicitly.
for _key in ("OPENAI_BASE_URL", "SVQA_JUDGE_MODEL"):
    os.environ.pop(_key, None)


def pytest_configure(config):
    config.addinivalue_line("markers", "real_widths: exports checkpoints with the real widths of LLaVA-OV-0.5B and "
                                       "Qwen2.5-VL-3B through --model (minutes, GBs of disk; in the default run)")


@pytest.fixture(scope="session")
def svqa_bin():
    path = pathlib.Path(os.environ.get("SVQA_BIN", ROOT / "build" / "bin" / "svqa"))
    if not path.exists():
        pytest.fail(f"{path} not found: build first (scripts/build.sh) or set SVQA_BIN")
    return path


@pytest.fixture(scope="session")
def root():
    return ROOT


@pytest.fixture(scope="session")
def tiny_export(tmp_path_factory):
    """tiny_export(arch) → a tiny random export of that architecture (seed 0), made once per session."""
    from backbone_reference import export_tiny

    made = {}

    def get(architecture):
        if architecture not in made:
            made[architecture] = export_tiny(architecture, tmp_path_factory.mktemp(architecture) / "export")
        return made[architecture]

    return get
