#include "strategies/encoding/streamingtom/streamingtom.h"

#include "engine/visual_token_reducer.h"
#include "strategies/kit/rekv_sliding_window.h"
#include "strategies/kit/unit_block.h"
#include "strategies/encoding/streamingtom/ctr_reducer.h"

namespace svqa {

std::unique_ptr<EncodingStrategy> make_streamingtom(const StreamingtomOptions& o, const RuntimeOptions& runtime) {
  RekvOptions window;
  window.n_local = o.n_local;
  window.positions = o.positions;
  window.sink_entry = o.sink_entry;
  window.answer_fallback = false;  // query.py: the question attends to the sinks and the retrieved groups, all of them
  const CtrSettings ctr{o.retain_tokens, o.similarity_threshold, o.k, o.beta};
  return std::make_unique<ReducingEncoder>(std::make_unique<CtrReducer>(ctr, static_cast<uint64_t>(runtime.seed)),
                                           std::make_unique<RekvSlidingWindow>(window));
}

}  // namespace svqa
