"""Hugging Face side of the Qwen3-VL parity tests (transformers 5.23), in its own process: the
processor needs torchvision, which stays off .venv's path (see models/export/vision_deps.py).

python hf_qwen3_reference.py CASE.json OUT_DIR — CASE: {"export", "frames" (.npy), "fps", "question",
"steps", "bf16", and optionally "hf_dir": the checkpoint, when not the tiny export's hf/}. Writes OUT_DIR/{ids, template_ids, positions, logits, hidden, bf16_logits}.npy and
prints a JSON line {"greedy": [...], "grid": [t, h, w]}.
"""

import json
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
from models.export.vision_deps import use  # noqa: E402


def processor(hf_dir):
    from transformers import PreTrainedTokenizerFast, Qwen2VLImageProcessor, Qwen3VLProcessor, Qwen3VLVideoProcessor

    config = json.loads((hf_dir / "video_preprocessor_config.json").read_text())
    config.pop("video_processor_type")
    config.pop("processor_class", None)  # a released checkpoint's file names its processor too
    tok = PreTrainedTokenizerFast(tokenizer_file=str(hf_dir / "tokenizer.json"))
    return Qwen3VLProcessor(image_processor=Qwen2VLImageProcessor(patch_size=16), tokenizer=tok,
                            video_processor=Qwen3VLVideoProcessor(**config))


def encode(proc, text, frames, fps):
    from transformers.video_utils import VideoMetadata

    metadata = VideoMetadata(total_num_frames=len(frames), fps=fps, frames_indices=list(range(len(frames))))
    return proc(text=[text], videos=[frames], video_metadata=[metadata], return_tensors="pt",
                do_sample_frames=False, cap_pixels_per_frame=False)


def greedy(model, inputs, steps, eos):
    """First logits and up to `steps` greedy ids, each step a full forward without a cache."""
    import torch

    ids = inputs["input_ids"]
    first, out = None, []
    with torch.no_grad():
        for _ in range(steps):
            types = (ids == model.config.video_token_id).int() * 2
            logits = model(input_ids=ids, pixel_values_videos=inputs["pixel_values_videos"],
                           video_grid_thw=inputs["video_grid_thw"], mm_token_type_ids=types, use_cache=False).logits[0, -1]
            first = logits.float().clone() if first is None else first
            nxt = int(logits.argmax())
            out.append(nxt)
            ids = torch.cat([ids, torch.tensor([[nxt]])], 1)
            if nxt in eos:
                break
    return first.numpy(), out


def layer_outputs(model, inputs):
    """Each decoder layer's output with DeepStack added (what layer l+1 receives; the last layer's
    from the final norm's input), via forward pre-hooks: HF's recorded hidden_states are taken
    before the DeepStack addition."""
    import torch

    layers = model.model.language_model.layers
    seen = []
    hooks = [layer.register_forward_pre_hook(lambda m, args, kwargs: seen.append(args[0][0].clone()), with_kwargs=True)
             for layer in layers[1:]]
    hooks.append(model.model.language_model.norm.register_forward_pre_hook(lambda m, args: seen.append(args[0][0].clone())))
    types = (inputs["input_ids"] == model.config.video_token_id).int() * 2
    with torch.no_grad():
        model(**{k: inputs[k] for k in ("input_ids", "pixel_values_videos", "video_grid_thw")}, mm_token_type_ids=types,
              use_cache=False)
    for h in hooks:
        h.remove()
    return torch.stack(seen).float().numpy()


def main(case_file, out_dir):
    use("the Qwen3-VL processor")
    import torch
    import transformers

    case = json.loads(pathlib.Path(case_file).read_text())
    out = pathlib.Path(out_dir)
    export = pathlib.Path(case["export"])
    manifest = json.loads((export / "manifest.json").read_text())
    hf_dir = pathlib.Path(case.get("hf_dir", export / "hf"))
    proc = processor(hf_dir)
    frames = np.load(case["frames"])
    before, after = manifest["chat"]["video_prompt"].split("{video}")
    after = after.replace("{question}", case["question"])
    # The released processor replaces the template's <|vision_start|><|video_pad|><|vision_end|>
    # whole; 5.23 replaces only <|video_pad|>, so a bare <|video_pad|> gives the released layout.
    inputs = encode(proc, before + "<|video_pad|>" + after, frames, case["fps"])
    template = encode(proc, before + "<|vision_start|><|video_pad|><|vision_end|>" + after, frames, case["fps"])
    model = transformers.Qwen3VLForConditionalGeneration.from_pretrained(hf_dir, dtype=torch.float32).eval()
    types = (inputs["input_ids"] == model.config.video_token_id).int() * 2
    positions, _ = model.model.get_rope_index(inputs["input_ids"], types, video_grid_thw=inputs["video_grid_thw"])
    logits, ids = greedy(model, inputs, case["steps"], manifest["tokens"]["eos"])
    np.save(out / "ids.npy", inputs["input_ids"][0].numpy())
    np.save(out / "template_ids.npy", template["input_ids"][0].numpy())
    np.save(out / "positions.npy", positions[:, 0].numpy())
    np.save(out / "logits.npy", logits)
    np.save(out / "hidden.npy", layer_outputs(model, inputs))
    if case.get("bf16"):
        bf16 = {**inputs, "pixel_values_videos": inputs["pixel_values_videos"].bfloat16()}
        np.save(out / "bf16_logits.npy", greedy(model.bfloat16(), bf16, 1, [])[0])
    print(json.dumps({"greedy": ids, "grid": inputs["video_grid_thw"][0].tolist(),
                      "video_token_id": model.config.video_token_id}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
