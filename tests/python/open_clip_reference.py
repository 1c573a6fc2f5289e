"""open_clip's tiny random PE-Core (rebuilt from its seed, as `python -m models.export.image_text
--tiny pe_core` builds it), its SimpleTokenizer and its image preprocessing: the reference that
test_image_text_clip.py compares svqa against. Runs in its own process with .venv/hf-vision on the
path (models/export/vision_deps.py).

    python open_clip_reference.py SEED TEXTS.json FRAMES.npy SOURCE.npy OUT.json OUT_TEXT.npy OUT_IMAGE.npy OUT_PIXELS.npy

TEXTS.json: a list of strings. FRAMES.npy: uint8 [N, S, S, 3] at the model's size. SOURCE.npy: uint8
frames of another size, run through open_clip's own preprocess (PIL). OUT.json: {"ids": [...],
"ftfy_changes": [texts that ftfy.fix_text or html.unescape change beyond NFC, quotes and whitespace]}.
"""

import html
import json
import pathlib
import sys
import unicodedata

import numpy as np
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
from models.export import image_text_clip  # noqa: E402


def main(seed, texts_file, frames_file, source_file, out_json, out_text, out_image, out_pixels):
    import ftfy
    import open_clip
    from PIL import Image

    model, tok, preprocess = image_text_clip.make_tiny_pe_core(int(seed))
    texts = json.loads(pathlib.Path(texts_file).read_text())
    ids = tok(texts)
    # Texts whose cleaned form (whitespace collapsed) differs from NFC + uncurled quotes, what svqa does.
    def words(t):
        return " ".join(t.split())

    changed = [t for t in texts if words(html.unescape(html.unescape(ftfy.fix_text(t)))) !=
               words(unicodedata.normalize("NFC", t).translate(QUOTES))]
    frames = torch.from_numpy(np.load(frames_file)).permute(0, 3, 1, 2).float() / 255
    transform = open_clip.image_transform(model.visual.image_size, is_train=False, mean=preprocess["mean"],
                                          std=preprocess["std"], interpolation=preprocess["interpolation"],
                                          resize_mode=preprocess["resize_mode"])
    pixels = torch.stack([transform(Image.fromarray(f)) for f in np.load(source_file)])
    with torch.no_grad():
        text = model.encode_text(ids, normalize=True)
        image = model.encode_image((frames - 0.5) / 0.5, normalize=True)
    pathlib.Path(out_json).write_text(json.dumps({"ids": ids.tolist(), "ftfy_changes": changed}))
    np.save(out_text, text.numpy())
    np.save(out_image, image.numpy())
    np.save(out_pixels, pixels.numpy())


QUOTES = {0x2BC: "'", **{c: "'" for c in range(0x2018, 0x201C)}, **{c: '"' for c in range(0x201C, 0x2020)}}

if __name__ == "__main__":
    from models.export import vision_deps

    vision_deps.use("the open_clip reference")
    main(*sys.argv[1:])
