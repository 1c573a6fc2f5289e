"""Checks, before anything is traced, that a Qwen checkpoint's video processor cuts frames as its vision
tower reads them: a patch size, temporal patch size or merge size that disagree give an export that
"succeeds" and a first frame that fails (or silently wrong tokens). The exporter traces and checks
spatial_merge_size 2 alone, the size of every released Qwen2.5-VL and Qwen3-VL."""

# (processor key, vision_config key): the same number on both sides.
PAIRS = (("patch_size", "patch_size"), ("temporal_patch_size", "temporal_patch_size"),
         ("merge_size", "spatial_merge_size"))
SUPPORTED_MERGE = 2


def check(architecture, processor, processor_where, vision, config_where):
    """`processor`: the processor settings (manifest.processor_settings), read from `processor_where`;
    `vision`: vision_config's values (a dict or a config object), from `config_where`. Exits with one
    line naming both files and fields at the first disagreement."""
    if architecture not in ("qwen2_5_vl", "qwen3_vl"):
        return
    get = vision.get if isinstance(vision, dict) else lambda key: getattr(vision, key, None)
    for ours, theirs in PAIRS:
        if processor.get(ours) != get(theirs):
            raise SystemExit(f"export: {processor_where}: \"{ours}\" {processor.get(ours)!r} disagrees with "
                             f"{config_where} vision_config.{theirs} {get(theirs)!r}: frames would be cut into "
                             "patches the vision tower does not read")
    if get("spatial_merge_size") != SUPPORTED_MERGE:
        raise SystemExit(f"export: {config_where}: vision_config.spatial_merge_size {get('spatial_merge_size')!r}: "
                         f"the exporter traces and checks {SUPPORTED_MERGE} only (every released Qwen2.5-VL and "
                         "Qwen3-VL)")
