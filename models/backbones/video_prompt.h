#pragma once
// The backbone's chat template around one video and one question, as token ids.

#include <cstdint>
#include <string>
#include <vector>

#include "models/loading/manifest.h"
#include "models/tokenizers/tokenizer.h"

namespace svqa {

struct VideoPromptIds {
  std::vector<int64_t> before;  // template text up to {video}
  std::vector<int64_t> after;   // the rest, {question} filled in
};

// Splits manifest.video_prompt at {video}; each side is tokenized on its own, which equals
// tokenizing the whole with a special placeholder token (special tokens split the text anyway).
VideoPromptIds video_prompt_ids(const Manifest& m, const Tokenizer& tok, const std::string& question);

// Qwen3-VL: manifest.frame_prompt of one temporal patch at `seconds` ("<12.5 seconds><|vision_start|>"
// before its visual tokens, "<|vision_end|>" after); seconds written with one decimal, as Python's
// f"{t:.1f}" (both round the exact binary value).
VideoPromptIds frame_prompt_ids(const Manifest& m, const Tokenizer& tok, double seconds);

// Each temporal patch's time: the mean of its first and last frame's (HF's _calculate_timestamps);
// a last, partial patch is padded with copies of the last frame, as the processor pads.
std::vector<double> temporal_patch_seconds(const std::vector<double>& frame_times, int64_t temporal_patch_size);

}  // namespace svqa
