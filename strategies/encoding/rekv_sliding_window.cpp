#include "strategies/encoding/rekv_sliding_window.h"

#include <algorithm>

#include "core/nn/rope.h"

namespace svqa {

void RekvSlidingWindow::begin_stream(Backbone& backbone, const std::vector<int64_t>& sink_ids, MemoryBank& bank) {
  (void)bank;
  window_.begin(backbone, sink_ids);
  next_position_ = static_cast<int64_t>(sink_ids.size());
}

void RekvSlidingWindow::encode(Backbone& backbone, const std::vector<VisualUnit>& units, MemoryBank& bank) {
  std::vector<WindowInput> inputs;
  for (const auto& unit : units) inputs.push_back({unit.tokens, unit.positions});
  auto outputs = window_.prefill(backbone, inputs);
  const int64_t heads = backbone.manifest().text.num_heads;
  for (size_t i = 0; i < units.size(); ++i) {
    const VisualUnit& unit = units[i];
    KvBlock block;
    block.granularity = Granularity::Frame;
    block.first_frame = unit.first_frame;
    block.last_frame = unit.last_frame;
    block.start_time = unit.start_time;
    block.end_time = unit.end_time;
    block.positions = unit.positions.to(at::kCPU);
    block.keys = std::move(outputs[i].keys);
    block.values = std::move(outputs[i].values);
    for (const auto& k : block.keys) block.representatives.push_back(mean_key_representative(k, heads));
    next_position_ = std::max(next_position_, svqa::next_position(unit.positions));
    bank.add(std::move(block));
  }
}

}  // namespace svqa
