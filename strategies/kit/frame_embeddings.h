#pragma once
// Image-text embeddings of every frame of the stream, kept beside the bank and mapped to its
// blocks by frame index: what external retrieval (ReKV §3.6) and Mem-Stream's external expert
// score a question against.

#include <ATen/ATen.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/stream_types.h"
#include "core/memory/memory_bank.h"

namespace svqa {

class ImageTextModel;

// Cosine of each frame to a question, frames ascending.
struct FrameScores {
  std::vector<int64_t> frames;
  at::Tensor cosine;      // [frames.size()] float64 on the CPU, contiguous
  at::Tensor embeddings;  // [frames.size(), D] float32 unit rows, on the model's device
};

class FrameEmbeddings {
 public:
  explicit FrameEmbeddings(std::shared_ptr<ImageTextModel> model);

  void clear();
  // Embeds the unit's rgb frames (its frame indices first_frame, first_frame + 1, ...).
  void observe(const VisualUnit& unit);
  // Frames observed so far up to `last_frame`, with their cosine to `text`.
  FrameScores score(const std::string& text, int64_t last_frame) const;
  at::Tensor embed_text(const std::string& text) const;  // [D] unit norm, on the model's device

 private:
  std::shared_ptr<ImageTextModel> model_;
  std::vector<at::Tensor> embeddings_;  // per observed unit: [f, D] unit rows
  std::vector<int64_t> frames_;         // frame index of each embedding row, in observation order
};

// The last frame any block of the bank holds; -1 for an empty bank.
int64_t last_bank_frame(const MemoryBank& bank);

// Ids of the bank's blocks whose [first_frame, last_frame] holds one of `frames` (ascending).
std::vector<int64_t> blocks_covering_frames(const MemoryBank& bank, const std::vector<int64_t>& frames);

// Per block of the bank holding scored frames: the max or mean ("max" | "mean") of their cosines
// (a Qwen2.5-VL block is a 2-frame temporal patch; a LLaVA-OV block one frame).
std::map<int64_t, double> block_frame_scores(const MemoryBank& bank, const FrameScores& scored,
                                             const std::string& reduce);

}  // namespace svqa
