#pragma once
// Baselines that choose blocks by time alone: every block a layer stores (the full-context
// reference), or k of its frame blocks evenly spread over the past, or its last k.

#include <cstdint>
#include <string>
#include <vector>

#include "core/config/schema.h"
#include "core/engine/strategy.h"

namespace svqa {

struct FullContextOptions {
  static void declare(Schema<FullContextOptions>&) {}
};

struct FrameCountOptions {
  int64_t frames = 64;
  static void declare(Schema<FrameCountOptions>& s) {
    s.field("frames", &FrameCountOptions::frames, "frame blocks to take").min(1)
        .max(kMaxBlocksOption);
  }
};

class TimeBaseline final : public RetrievalStrategy {
 public:
  enum class Rule { All, Uniform, Recent };
  TimeBaseline(Rule rule, int64_t frames) : rule_(rule), frames_(frames) {}
  std::vector<int64_t> select(const LayerQuery& query, const MemoryBank& bank) override;

 private:
  Rule rule_;
  int64_t frames_;
};

// Indices of `k` of `n` items evenly spread (linspace(0, n-1, k) truncated, as the reference
// codes sample frames); all of them when k >= n.
std::vector<int64_t> uniform_indices(int64_t n, int64_t k);

}  // namespace svqa
