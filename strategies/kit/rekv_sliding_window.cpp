#include "strategies/kit/rekv_sliding_window.h"

#include "strategies/kit/unit_block.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/nn/op_counter.h"
#include "core/nn/rope.h"

namespace svqa {

void RekvSlidingWindow::begin_stream(Backbone& backbone, const std::vector<int64_t>& sink_ids, MemoryBank& bank) {
  (void)bank;
  window_.begin(backbone, sink_ids);
  next_position_ = static_cast<int64_t>(sink_ids.size());
}

void RekvSlidingWindow::encode(Backbone& backbone, const std::vector<VisualUnit>& units, MemoryBank& bank) {
  std::vector<WindowInput> inputs;
  for (const auto& unit : units) inputs.push_back({unit.tokens, unit.positions, unit.deepstack});
  auto outputs = window_.prefill(backbone, inputs);
  const OpPhaseScope phase(OpPhase::bank);
  for (size_t i = 0; i < units.size(); ++i) {
    next_position_ = std::max(next_position_, svqa::next_position(units[i].positions));
    bank.add(rekv_unit_block(units[i], std::move(outputs[i])));
  }
}

void RekvSlidingWindow::add_record_fields(nlohmann::json& extra) const {
  extra["rekv_sliding_window"]["window_tokens"] = window_.attended_tokens(0);
}

}  // namespace svqa
