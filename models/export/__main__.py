"""python -m models.export (--model HF_DIR|ORG/NAME[@REVISION] | --tiny ARCH|PRESET [--seed N]) --out DIR [--dtype float32]

Writes DIR/manifest.json, vision.pt, text.pt, layers/NNN.pt and tokenizer.json; with --tiny also
DIR/hf/ (the random Hugging Face model, its video processor and tokenizer) so anyone can compare.
A hub id is resolved through huggingface_hub (its cache, HF_HOME, HF_HUB_OFFLINE, HF_TOKEN). DIR
appears only once the export is complete.
"""

import argparse
import json
import pathlib
import shutil
import sys
import time
import warnings

import torch

from . import hub, processor_config, tiny, vision_checks
from .manifest import FORMAT_VERSION, build_manifest, processor_settings
from .staging import staged
from .trace import trace_text, trace_layers, trace_vision

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
ARCHITECTURES = ("llava_onevision", "qwen2_5_vl", "qwen3_vl")


def model_classes(architecture):
    import transformers

    if architecture == "llava_onevision":
        return transformers.LlavaOnevisionConfig, transformers.LlavaOnevisionForConditionalGeneration
    if architecture == "qwen3_vl":
        return transformers.Qwen3VLConfig, transformers.Qwen3VLForConditionalGeneration
    return transformers.Qwen2_5_VLConfig, transformers.Qwen2_5_VLForConditionalGeneration


def make_tiny(name, seed, overrides, hf_dir, weight_std=None):
    """Builds, seeds and saves a tiny random model of an architecture or preset; returns (model,
    processor settings, tokenizer.json path). `weight_std`: every matrix (linear, embedding,
    convolution) redrawn from N(0, weight_std²) after Hugging Face's init (std 0.02, at which the
    model repeats one token whatever it sees); norms and biases kept."""
    architecture, overrides = tiny.resolve(name, overrides)
    config_cls, model_cls = model_classes(architecture)
    tok = tiny.train_tokenizer(architecture)
    build = {"llava_onevision": tiny.llava_onevision_config, "qwen2_5_vl": tiny.qwen2_5_vl_config,
             "qwen3_vl": tiny.qwen3_vl_config}[architecture]
    settings = tiny.apply_overrides(build(tok), overrides)
    tiny.check_runnable(architecture, settings)
    vision_checks.check(architecture, tiny.video_processor_config(architecture, settings), "--tiny processor",
                        settings["vision_config"], "--tiny config")
    config = config_cls(**settings)
    torch.manual_seed(seed)
    model = model_cls(config).eval()
    if weight_std is not None:
        with torch.no_grad():
            for p in model.parameters():
                if p.dim() >= 2:
                    p.normal_(0.0, weight_std)
    processor = tiny.video_processor_config(architecture, settings)
    hf_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(hf_dir)
    (hf_dir / "video_preprocessor_config.json").write_text(json.dumps(processor, indent=2) + "\n")
    tok.save(str(hf_dir / "tokenizer.json"))
    return model, processor_settings(architecture, processor, "--tiny"), hf_dir / "tokenizer.json"


def load_checkpoint(model_dir, dtype):
    import transformers

    model_dir = pathlib.Path(model_dir)
    if not (model_dir / "config.json").exists():
        raise SystemExit(f"export: {model_dir}/config.json not found (expected a Hugging Face model directory)")
    config = transformers.AutoConfig.from_pretrained(model_dir)
    if config.model_type not in ARCHITECTURES:
        raise SystemExit(f"export: {model_dir}: model_type '{config.model_type}' is not supported "
                         f"(expected one of {', '.join(ARCHITECTURES)})")
    _, model_cls = model_classes(config.model_type)
    # Read as JSON: HF's video processor classes need torchvision, which the exporter does not.
    saved, where = processor_config.find(model_dir, "video_processor")
    processor = processor_settings(config.model_type, saved, where)
    vision_checks.check(config.model_type, processor, where, config.vision_config, model_dir / "config.json")
    model = model_cls.from_pretrained(model_dir, dtype=dtype).eval()
    tokenizer = model_dir / "tokenizer.json"
    if not tokenizer.exists():
        raise SystemExit(f"export: {tokenizer} not found (svqa reads the fast tokenizer's tokenizer.json)")
    return model, processor, tokenizer


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m models.export", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--model", help="a Hugging Face checkpoint (LLaVA-OneVision, Qwen2.5-VL or Qwen3-VL): its "
                                        "directory, or its hub id ORG/NAME[@REVISION]")
    source.add_argument("--tiny", choices=ARCHITECTURES + tuple(tiny.PRESETS),
                        help="a tiny random-weight model of this architecture, or a named variant "
                             "(llava_onevision_196: 196 tokens per 384 px frame, as the real model)")
    parser.add_argument("--seed", type=int, default=0, help="weights seed for --tiny")
    parser.add_argument("--weight-std", type=float, default=None,
                        help="--tiny: draw every weight matrix from N(0, std²) instead of Hugging Face's init "
                             "(std 0.02, whose model repeats one token whatever it sees); e.g. 0.3 makes answers "
                             "and retrievals depend on the input, for parity tests")
    parser.add_argument("--tiny-set", action="append", default=[], metavar="KEY=VALUE",
                        help="change a tiny config value, e.g. text_config.num_hidden_layers=4 (repeatable)")
    parser.add_argument("--dtype", choices=DTYPES, default="float32")
    parser.add_argument("--out", required=True, help="export directory (created when the export is complete; "
                                                      "an earlier export there is replaced)")
    args = parser.parse_args(argv)
    if args.weight_std is not None and (not args.tiny or not args.weight_std > 0):
        parser.error("--weight-std needs --tiny and a positive value")

    warnings.filterwarnings("ignore", message=".*TorchScript.*")  # deprecated upstream; torch is pinned
    start = time.time()
    model_dir, source, hub_record = args.model, args.model, None
    named = hub.parse(args.model) if args.model else None
    if named:
        model_dir, commit = hub.resolve(*named)
        source, hub_record = f"{named[0]}@{commit}", {"repo_id": named[0], "revision": named[1] or "main",
                                                      "commit": commit}
    with staged(args.out) as out:
        architecture = export(args, model_dir, source, hub_record, out)
    print(f"exported {architecture} ({args.dtype}, format {FORMAT_VERSION}) to {args.out} in {time.time() - start:.1f} s",
          file=sys.stderr)


def export(args, model_dir, source, hub_record, out):
    """Writes the export into `out`; returns the architecture."""
    dtype = DTYPES[args.dtype]
    if args.tiny:
        model, processor, tokenizer = make_tiny(args.tiny, args.seed, args.tiny_set, out / "hf", args.weight_std)
        model = model.to(dtype)
        source = f"tiny:{args.tiny}:seed={args.seed}" + (f":std={args.weight_std}" if args.weight_std is not None else "")
    else:
        model, processor, tokenizer = load_checkpoint(model_dir, dtype)
    architecture = model.config.model_type

    with torch.no_grad():
        trace_text(model, architecture, dtype).save(str(out / "text.pt"))
        layer_files = []
        (out / "layers").mkdir(exist_ok=True)
        for i, traced in enumerate(trace_layers(model, architecture, dtype)):
            layer_files.append(f"layers/{i:03d}.pt")
            traced.save(str(out / layer_files[-1]))
        trace_vision(model, architecture, dtype).save(str(out / "vision.pt"))
    shutil.copyfile(tokenizer, out / "tokenizer.json")
    manifest = build_manifest(model, processor, architecture, args.dtype, layer_files, source=source)
    if hub_record:
        manifest["hub"] = hub_record
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")  # the folder is renamed into place after
    return architecture


if __name__ == "__main__":
    main()
