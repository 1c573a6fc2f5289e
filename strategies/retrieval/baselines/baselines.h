#pragma once
// Baselines that choose blocks of the stream's bank by time alone: every block a layer stores (the
// full-context reference), or k of its frame blocks evenly spread over the past (bank_uniform), or
// its last k (bank_recent). The papers' no-memory baselines are strategies/encoding/fresh_frames/fresh_frames.h.

#include <cstdint>
#include <string>
#include <vector>

#include "core/config/schema.h"
#include "engine/strategy.h"
#include "strategies/kit/uniform_indices.h"

namespace svqa {

struct FullContextOptions {
  static void declare(Schema<FullContextOptions>&) {}
};

// `retrieve_size`, as every retrieval strategy names how many blocks come back (so one grid axis
// sets the budget of internal, uniform and recent alike).
struct FrameCountOptions {
  int64_t retrieve_size = 64;
  static void declare(Schema<FrameCountOptions>& s) {
    s.field("retrieve_size", &FrameCountOptions::retrieve_size, "frame blocks to take").min(1)
        .max(kMaxBlocksOption);
  }
};

class TimeBaseline final : public RetrievalStrategy {
 public:
  enum class Rule { All, Uniform, Recent };
  TimeBaseline(Rule rule, int64_t frames) : rule_(rule), frames_(frames) {}
  std::vector<int64_t> select(const LayerQuery& query, const MemoryBank& bank) override;
  // Chosen by time alone: the question is not run through the retrieval pass (it would only cost time).
  bool selects_per_layer() const override { return false; }

 private:
  Rule rule_;
  int64_t frames_;
};

}  // namespace svqa
