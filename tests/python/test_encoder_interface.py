"""The encoding strategy's interface is its operations (issue 38): at most six virtual functions, what
an encoder does to memory being its registration's EncoderTraits; and the wrappers around one (a
reducer in front, a snapshot's recorder and replay) forward nothing by hand: EncoderWrapper, in
engine/strategy.h, is the one place that forwards."""

import re

# (header, class) of each encoder that wraps or stands in for another.
WRAPPERS = [("engine/visual_token_reducer.h", "ReducingEncoder"),
            ("engine/snapshot/recording_encoder.h", "RecordingEncoder"),
            ("engine/snapshot/replay_encoder.h", "ReplayEncoder")]


def class_body(text, name):
    start = re.search(r"\bclass " + name + r"\b[^;{]*\{", text)
    assert start, name
    depth, i = 1, start.end()
    while depth:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return text[start.end():i]


def test_the_encoding_strategy_has_at_most_six_virtual_functions(root):
    body = class_body((root / "engine/strategy.h").read_text(), "EncodingStrategy")
    virtuals = [m for m in re.findall(r"virtual\s+[^;{]*?(\w+)\s*\(", body) if m != "EncodingStrategy"]
    assert "~" not in "".join(virtuals)
    assert 0 < len(virtuals) <= 6, virtuals


def test_no_wrapper_forwards_a_call_by_hand(root):
    # A hand-written forward: an override whose whole body is the same call on another encoder.
    forward = re.compile(r"(\w+)\s*\([^)]*\)\s*(const\s*)?override\s*\{\s*(return\s+)?\w+(\(\))?\s*(->|\.)\s*(\w+)\s*\(")
    for header, cls in WRAPPERS:
        body = class_body((root / header).read_text(), cls)
        same = [m.group(1) for m in forward.finditer(body) if m.group(1) == m.group(6)]
        assert not same, f"{header}: {cls} forwards {same} by hand"
        assert "inner_" not in body and "configured_" not in body, header
