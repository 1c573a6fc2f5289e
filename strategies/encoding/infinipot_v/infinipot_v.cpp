#include "strategies/encoding/infinipot_v/infinipot_v.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/layer_over_context.h"
#include "models/backbones/full_context.h"
#include "strategies/kit/unit_block.h"
#include "strategies/kit/sink_prefill.h"

namespace svqa {

void InfinipotVOptions::declare(Schema<InfinipotVOptions>& s) {
  s.field("cap_frames", &InfinipotVOptions::cap_frames,
          "frames (visual units) of tokens the cache holds at most; on reaching it every layer is compacted "
          "(the reference's BLOCK_SIZE, 16 in scripts/run_sample.sh)")
      .min(2)
      .max(kMaxBlocksOption);
  s.field("keep_frames", &InfinipotVOptions::keep_frames,
          "frames' worth of tokens a compaction keeps per layer (COMPRESS_FRAME_NUM, 12 in scripts/run_sample.sh)")
      .min(1)
      .max(kMaxBlocksOption);
  s.field("tar_ratio", &InfinipotVOptions::tar_ratio,
          "share of the kept tokens chosen by temporal redundancy, the rest by value norm (--tar_ratio, 0.5)")
      .min(0)
      .max(1);
  s.field("query_ratio", &InfinipotVOptions::query_ratio,
          "share of the cached frames that are TaR's recent (query) frames, kept whole (--query_ratio, 0.25)")
      .min(0)
      .max(1);
  s.field("adaptive_pooling", &InfinipotVOptions::adaptive_pooling,
          "VaN scores averaged over each frame's grid, 7x7 / 5x5 / 1-D 3 / none by layer quarter (--adaptive_pooling, "
          "on in run_ovu.sh); false: raw value norms");
  s.check("keep_frames", [](const InfinipotVOptions& o) {
    return o.keep_frames < o.cap_frames ? std::string() : "must be below cap_frames (" + std::to_string(o.cap_frames) + ")";
  });
  s.check("query_ratio", [](const InfinipotVOptions& o) {
    if (o.tar_ratio == 0) return std::string();
    const auto recent = static_cast<int64_t>(static_cast<double>(o.cap_frames) * o.query_ratio);
    if (recent < 1) return std::string("gives int(cap_frames x query_ratio) = 0 recent frames; TaR needs at least one");
    if (o.tar_ratio * static_cast<double>(o.keep_frames) < static_cast<double>(recent))
      return "gives " + std::to_string(recent) + " recent frames, more than TaR's share of keep_frames (tar_ratio x " +
             "keep_frames = " + format_number(o.tar_ratio * static_cast<double>(o.keep_frames)) + ")";
    return std::string();
  });
}

void InfinipotV::begin_stream(Backbone& backbone, const std::vector<int64_t>& sink_ids, MemoryBank& bank) {
  (void)bank;
  rope_ = text_rotary(backbone.manifest());
  sinks_ = prefill_sinks(backbone, sink_ids);
  next_position_ = static_cast<int64_t>(sink_ids.size());
  tokens_per_frame_ = 0;
  cache_frames_ = compactions_ = 0;
}

// Every unit has the first unit's token count (TaR compares frames token by token); its grid's rows
// come from its mRoPE positions, or for 1-D positions (LLaVA-OV) √tokens when whole, else one row.
void InfinipotV::check_unit(const VisualUnit& unit) {
  if (unit.deepstack.defined())
    throw std::invalid_argument("infinipot_v: Qwen3-VL's DeepStack units are not supported (the reference runs Qwen2/2.5-VL)");
  const int64_t n = unit.tokens.size(0);
  if (tokens_per_frame_ == 0) {
    tokens_per_frame_ = n;
    const auto rows = unit.positions[1];
    grid_height_ = (rows.max() - rows.min()).item<int64_t>() + 1;
    if (at::equal(unit.positions[0], unit.positions[1])) {
      const auto side = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(n))));
      grid_height_ = side * side == n ? side : 1;
    }
  } else if (n != tokens_per_frame_) {
    throw std::invalid_argument("infinipot_v: a unit of " + std::to_string(n) + " tokens; the stream's first had " +
                                std::to_string(tokens_per_frame_) + " (frames are compared token by token)");
  }
}

// Each unit goes through every layer attending to [sinks | the layer's cache] at their own positions
// and causally to itself; its un-rotated K/V per layer become a Frame block.
void InfinipotV::encode(Backbone& backbone, const std::vector<VisualUnit>& units, MemoryBank& bank) {
  for (const auto& unit : units) {
    check_unit(unit);
    auto kv = forward_over_memory(backbone, unit.tokens.to(backbone.device(), backbone.dtype()),
                                  {&sinks_, &bank, {unit.positions}});
    bank.add(rekv_unit_block(unit, {std::move(kv.keys), std::move(kv.values)}));
    next_position_ = std::max(next_position_, svqa::next_position(unit.positions));
    if (++cache_frames_ == options_.cap_frames) compact(backbone, bank);
  }
}

// Layer `layer`'s cache cut to the tokens TaR and VaN keep, scored on keys rotated at their
// positions (in the backbone's dtype, on its device), as the reference's cache holds them.
LayerMemory InfinipotV::kept_tokens(Backbone& backbone, const MemoryBank& bank, int64_t layer) const {
  const LayerMemory memory = bank.layer_memory(layer);
  const auto device = backbone.device();
  const auto rotated = memory.keys.to(device, backbone.dtype(), /*non_blocking=*/false, /*copy=*/true);
  apply_rotary_(rotated, rope_.tables(memory.positions.to(device)));
  TarVanParams params{tokens_per_frame_, options_.keep_frames, options_.tar_ratio, options_.query_ratio, -1, 3,
                      grid_height_};
  if (options_.adaptive_pooling) adaptive_pooling(layer, backbone.num_layers(), params);
  const auto kept = tar_van_keep(rotated, memory.values.to(device, backbone.dtype()), params).to(at::kCPU);
  return {memory.keys.index_select(0, kept), memory.values.index_select(0, kept), memory.positions.index_select(1, kept)};
}

// Every layer cut to keep_frames frames' worth of tokens (the bank rewrites each layer).
void InfinipotV::compact(Backbone& backbone, MemoryBank& bank) {
  for (int64_t l = 0; l < backbone.num_layers(); ++l) bank.replace_layer(l, kept_tokens(backbone, bank, l));
  cache_frames_ = options_.keep_frames;
  ++compactions_;
}

void InfinipotV::add_record_fields(nlohmann::json& extra) const {
  extra["infinipot_v"] = {{"cache_frames", cache_frames_}, {"compactions", compactions_}};
}

}  // namespace svqa
