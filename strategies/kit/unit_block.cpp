#include "strategies/kit/unit_block.h"

namespace svqa {

KvBlock rekv_unit_block(const VisualUnit& unit, WindowOutput output) {
  KvBlock block;
  block.granularity = Granularity::Frame;
  block.first_frame = unit.first_frame;
  block.last_frame = unit.last_frame;
  block.start_time = unit.start_time;
  block.end_time = unit.end_time;
  block.positions = unit.positions.to(at::kCPU);
  block.keys = std::move(output.keys);
  block.values = std::move(output.values);
  for (const auto& k : block.keys) block.representatives.push_back(mean_key_representative(k));
  return block;
}

}  // namespace svqa
