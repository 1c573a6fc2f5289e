"""experiments/methods/rekv.yaml and rekv_paper.yaml: each validates as the base of an experiment
(a benchmark added), resolves to ReKV's reference settings, and the paper preset differs from the
code preset exactly where paper and code disagree (docs/strategies.md, "ReKV presets")."""

import subprocess

import pytest
import yaml


def resolved(svqa_bin, root, tmp_path, preset):
    exp = tmp_path / f"on_{preset}"
    exp.write_text(f"_base_: {root / 'experiments' / 'methods' / preset}\n"
                   "benchmark: {type: stream_list, options: {annotations: streams.json}}\n")
    r = subprocess.run([svqa_bin, "validate", exp, "--no-paths"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([svqa_bin, "validate", exp, "--dump", "--no-paths"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return yaml.safe_load(r.stdout)


@pytest.mark.parametrize("preset", ["rekv.yaml", "rekv_paper.yaml"])
def test_preset_validates_with_the_reference_rules(svqa_bin, root, tmp_path, preset):
    config = resolved(svqa_bin, root, tmp_path, preset)
    stream = config["stream"]
    assert stream["sink_prompt"] == "<|im_start|>system \nYou are a helpful assistant.<|im_end|><|im_start|>user "
    assert stream["answer_prompt"] == "\n{question}<|im_end|><|im_start|>assistant\n"
    assert (stream["fps"], stream["frame_step"], stream["frames_before_question"]) == (0.5, "reference", "exclusive")
    assert (stream["max_new_tokens"], stream["position_policy"], stream["chunk_frames"]) == (0, "contiguous", 64)
    assert config["encoding"] == {"type": "rekv_sliding_window", "options": {
        "n_local": 15000, "positions": "window", "sink_entry": "migrate", "answer_fallback": True}}
    assert config["retrieval"]["type"] == "internal"
    assert (config["retrieval"]["options"]["retrieve_size"], config["retrieval"]["options"]["chunk_size"]) == (64, 1)


def test_paper_preset_differs_from_the_code_preset_only_where_the_paper_says_otherwise(svqa_bin, root, tmp_path):
    code = resolved(svqa_bin, root, tmp_path, "rekv.yaml")
    paper = resolved(svqa_bin, root, tmp_path, "rekv_paper.yaml")
    assert (code["runtime"]["dtype"], paper["runtime"]["dtype"]) == ("float16", "bfloat16")
    assert (code["retrieval"]["options"]["similarity"], paper["retrieval"]["options"]["similarity"]) == ("dot", "cosine")
    assert (code["label"], paper["label"]) == ("ReKV", "ReKV (paper)")  # display names in the report
    for config in (code, paper):
        del config["runtime"]["dtype"], config["retrieval"]["options"]["similarity"]
        config.pop("name", None), config.pop("label")
    assert code == paper
