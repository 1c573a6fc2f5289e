"""The Hugging Face video processors (and CLIP's image processor; transformers 5.23) on given frames: the reference that
test_preprocess.py compares `svqa frames --preprocess` against.

Runs in its own process (`python hf_video_reference.py CASES.json`) with .venv/hf-vision on
PYTHONPATH: the processors need torchvision, which stays off .venv's path (see
requirements-hf-vision.txt). CASES.json is a list of {"frames": IN.npy, "spec": SPEC.json,
"out": OUT.npy}; each case's pixels go to OUT.npy; stdout is the list of grid_thw (null for fixed).
"""

import json
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
from models.export.vision_deps import import_torchvision  # noqa: E402


def processor_for(image):
    from transformers import CLIPImageProcessor, LlavaOnevisionVideoProcessor, Qwen2VLVideoProcessor, Qwen3VLVideoProcessor

    common = dict(image_mean=image["mean"], image_std=image["std"], rescale_factor=image["rescale_factor"])
    if image["resize"] == "shortest_edge_crop":
        return CLIPImageProcessor(size={"shortest_edge": image["shortest_edge"]},
                                  crop_size={"height": image["height"], "width": image["width"]}, **common), {}
    if image["resize"] == "fixed":
        return LlavaOnevisionVideoProcessor(size={"height": image["height"], "width": image["width"]}, **common), {}
    if image["resize"] == "qwen3_smart":
        processor = Qwen3VLVideoProcessor(
            size={"shortest_edge": image["min_pixels"], "longest_edge": image["max_pixels"]},
            patch_size=image["patch_size"], merge_size=image["merge_size"],
            temporal_patch_size=image["temporal_patch_size"], **common)
        # The frames given are the video (svqa samples before preprocessing); the uncapped rule.
        return processor, {"cap_pixels_per_frame": False, "do_sample_frames": False}
    processor = Qwen2VLVideoProcessor(
        min_pixels=image["min_pixels"], max_pixels=image["max_pixels"], patch_size=image["patch_size"],
        merge_size=image["merge_size"], temporal_patch_size=image["temporal_patch_size"], **common)
    # The per-frame rule, as svqa implements it (the total-video cap is a separate, later option).
    return processor, {"cap_pixels_per_frame": False}


def main(cases_file):
    import_torchvision()
    grids = []
    for case in json.loads(open(cases_file).read()):
        image = json.loads(open(case["spec"]).read())["image"]
        processor, call_options = processor_for(image)
        frames = np.load(case["frames"])
        if image["resize"] == "shortest_edge_crop":  # an image processor: frames as a batch of images
            out = processor(images=list(frames), input_data_format="channels_last", return_tensors="pt")
            np.save(case["out"], out["pixel_values"].numpy().astype(np.float32))
            grids.append(None)
            continue
        out = processor(videos=[frames], input_data_format="channels_last", return_tensors="pt", **call_options)
        pixels = out["pixel_values_videos"]
        if image["resize"] == "fixed":
            pixels = pixels[0]  # [1, F, 3, H, W] → [F, 3, H, W]
            grids.append(None)
        else:
            grids.append(out["video_grid_thw"][0].tolist())
        np.save(case["out"], pixels.numpy().astype(np.float32))
    print(json.dumps(grids))


if __name__ == "__main__":
    main(sys.argv[1])
