#pragma once
// No retrieval: the encoder's memory is the context as it stands (InfiniPot-V, HERMES: methods that
// shape their memory while the stream plays and answer from all of it). The answerer skips the
// retrieval pass (engine/question_answerer.h): each layer's stored blocks, in id order, placed
// by the position policy, are that layer's context.

#include <cstdint>
#include <vector>

#include "core/config/schema.h"
#include "engine/strategy.h"

namespace svqa {

struct MemoryAsIsOptions {
  static void declare(Schema<MemoryAsIsOptions>&) {}
};

class MemoryAsIs final : public RetrievalStrategy {
 public:
  bool retrieves() const override { return false; }
  bool selects_per_layer() const override { return false; }
  // Never called (retrieves() is false): throws, so a caller that selects anyway is caught.
  std::vector<int64_t> select(const LayerQuery& query, const MemoryBank& bank) override;
};

}  // namespace svqa
