"""A checkpoint's saved image or video processor settings, found where transformers 5 looks, with no
silent default: pixels normalised with another model's mean/std are wrong on every frame.

transformers 5 saves a processor as one processor_config.json with each sub-processor nested
("video_processor": {...}, "image_processor": {...}); earlier versions saved video_preprocessor_config.json
and preprocessor_config.json. HF's loaders read the nested entry first, then those files; so does this."""

import json
import pathlib
import sys

# Where each kind of processor is looked for, in HF's order (after processor_config.json's nested entry).
FILES = {"video_processor": ("video_preprocessor_config.json", "preprocessor_config.json"),
         "image_processor": ("preprocessor_config.json",)}

# Keys whose HF class default is the same for every image and video processor and that real
# checkpoints leave out (Qwen2.5-VL's saves no rescale_factor): used, and said so on stderr.
CLASS_CONSTANTS = {"rescale_factor": 1 / 255, "resample": 3, "do_resize": True, "do_rescale": True,
                   "do_normalize": True, "do_center_crop": True}


def find(model_dir, kind):
    """(settings, where they came from) of the checkpoint's `kind` processor; exits naming what is
    missing when the checkpoint saved none."""
    model_dir = pathlib.Path(model_dir)
    nested = model_dir / "processor_config.json"
    if nested.exists():
        saved = _read(nested)
        if isinstance(saved.get(kind), dict):
            return saved[kind], f"{nested} ({kind})"
    for name in FILES[kind]:
        if (model_dir / name).exists():
            return _read(model_dir / name), str(model_dir / name)
    wanted = ", ".join([f"processor_config.json with a \"{kind}\" entry", *FILES[kind]])
    raise SystemExit(f"export: {model_dir}: no {kind.replace('_', ' ')} settings (expected one of: {wanted}); "
                     "its mean, std and sizes are not guessed")


def settings(saved, where, keys, constants=()):
    """`keys` of `saved`, each required (exits naming the first missing one), and `constants`
    (names in CLASS_CONSTANTS) taken from it or, announced on stderr, from the class default."""
    out = {}
    for key in keys:
        if key not in saved:
            raise SystemExit(f"export: {where}: no \"{key}\"; its value is not guessed (add it from the model's card)")
        out[key] = saved[key]
    for key in constants:
        if key in saved:
            out[key] = saved[key]
        else:
            out[key] = CLASS_CONSTANTS[key]
            print(f"export: {where}: no \"{key}\": using {out[key]!r}, the Hugging Face class default", file=sys.stderr)
    return out


def _read(path):
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SystemExit(f"export: {path}: cannot read ({e})")
    if not isinstance(data, dict):
        raise SystemExit(f"export: {path}: expected a JSON object")
    return data
