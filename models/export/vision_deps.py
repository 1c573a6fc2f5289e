"""torchvision and the libraries built on it (open_clip, timm, the HF image/video processors) for
the exporter and the parity tests, from .venv/hf-vision (requirements-hf-vision.txt).

They stay off .venv's import path: PyPI's torchvision is built against CUDA torch, so next to the
CPU torch its C++ ops do not load and a plain `import torchvision` fails, which would also break
`import transformers.models.*` if it were on the path. `use()` puts the folder on sys.path of this
process only and imports torchvision in a way that survives the missing ops.
"""

import pathlib
import sys

import torch

HF_VISION = pathlib.Path(__file__).resolve().parents[2] / ".venv" / "hf-vision"


def import_torchvision():
    # Its import fails declaring fake kernels for two C++ ops that did not load; declaring their
    # schemas first lets it import. Only pure-PyTorch parts (resize, transforms) are used.
    try:
        import torchvision  # noqa: F401
    except RuntimeError:
        for name in [m for m in sys.modules if m.startswith("torchvision")]:
            del sys.modules[name]
        for op in ("nms", "qnms"):
            torch.library.define(f"torchvision::{op}", "(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        import torchvision  # noqa: F401


def use(what="torchvision"):
    """Makes .venv/hf-vision importable in this process; `what` names the caller's need in the error."""
    if not (HF_VISION / "torchvision").is_dir():
        raise SystemExit(f"{HF_VISION} has no torchvision ({what} needs it): run scripts/setup.sh")
    if str(HF_VISION) not in sys.path:
        sys.path.insert(0, str(HF_VISION))
    import_torchvision()
