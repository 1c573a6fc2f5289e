#include "strategies/encoding/memstream/memstream_aks.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "core/nn/rope.h"
#include "models/backbones/full_context.h"
#include "strategies/kit/unit_block.h"

namespace svqa {
namespace {

// Row and column strides whose product is the compression r (×4: 2×2, ×8: 2×4, ×16: 4×4).
std::pair<int64_t, int64_t> dilation(double r) {
  const auto rows = std::max<int64_t>(1, static_cast<int64_t>(std::floor(std::sqrt(r))));
  const auto cols = std::max<int64_t>(1, static_cast<int64_t>(std::llround(r / static_cast<double>(rows))));
  return {rows, cols};
}

}  // namespace

at::Tensor least_similar(const at::Tensor& similarity, int64_t k) {
  const int64_t n = similarity.size(0);
  if (k >= n) return at::arange(n, at::kLong);
  // Ties (equal cosines) to the earlier token: a stable sort, not topk.
  const auto order = std::get<1>(similarity.to(at::kCPU, at::kDouble).sort(/*stable=*/true, 0, /*descending=*/false));
  return std::get<0>(order.narrow(0, 0, k).sort());
}

at::Tensor dilated_tokens(const at::Tensor& positions, int64_t row_stride, int64_t col_stride) {
  const auto p = positions.to(at::kCPU, at::kLong);
  const bool grid = !at::equal(p[1], p[0]) || !at::equal(p[2], p[0]);
  if (!grid) return at::arange(0, p.size(1), row_stride * col_stride, at::kLong);
  const auto h = p[1] - p[1].min(), w = p[2] - p[2].min();
  return at::nonzero((h.remainder(row_stride) == 0) & (w.remainder(col_stride) == 0)).flatten();
}

MemstreamAks::MemstreamAks(MemstreamAksOptions options) : options_(std::move(options)), window_(options_.n_local, window_rules(options_)) {}

void MemstreamAks::begin_stream(Backbone& backbone, const std::vector<int64_t>& sink_ids, MemoryBank& bank) {
  (void)bank;
  window_.begin(backbone, sink_ids);
  next_position_ = static_cast<int64_t>(sink_ids.size());
  units_seen_ = 0;
  previous_keys_.assign(static_cast<size_t>(backbone.num_layers()), at::Tensor());
  last_kept_.assign(static_cast<size_t>(backbone.num_layers()), at::Tensor());
}

at::Tensor MemstreamAks::select(Backbone& backbone, int64_t layer, const VisualUnit& unit, const LayerQkv& qkv) {
  const int64_t n = qkv.k.size(0);
  const auto [rows, cols] = dilation(options_.compression);
  if (options_.mode == "dilated") return dilated_tokens(unit.positions, rows, cols);
  if (options_.mode == "uniform_frames") {
    const auto every = std::max<int64_t>(1, std::llround(options_.compression));
    return unit_index_ % every == 0 ? at::Tensor() : at::empty({0}, at::kLong);
  }
  // AKS: the tokens whose keys changed most since the previous frame-feature.
  at::Tensor keys = qkv.k.to(at::kFloat);
  if (options_.keys == "post_rope") {
    const auto rope = text_rotary(backbone.manifest());
    keys = apply_rotary(qkv.k, rope.tables(unit.positions.to(backbone.device()))).to(at::kFloat);
  }
  at::Tensor& previous = previous_keys_[static_cast<size_t>(layer)];
  const at::Tensor before = previous;
  previous = keys;
  const int64_t k = options_.keep > 0 ? options_.keep
                                      : std::max<int64_t>(1, std::llround(static_cast<double>(n) / options_.compression));
  if (!before.defined()) return options_.first == "dense" ? at::Tensor() : dilated_tokens(unit.positions, rows, cols);
  if (before.size(0) != n) return least_similar(-keys.flatten(1).norm(2, 1), k);  // other grid: largest keys
  const at::Tensor similarity = options_.similarity == "concat_heads"
                                    ? at::cosine_similarity(keys.flatten(1), before.flatten(1), 1)
                                    : at::cosine_similarity(keys, before, 2).mean(1);
  return least_similar(similarity, k);
}

void MemstreamAks::encode(Backbone& backbone, const std::vector<VisualUnit>& units, MemoryBank& bank) {
  std::vector<WindowInput> inputs;
  for (const auto& unit : units) inputs.push_back({unit.tokens, unit.positions, unit.deepstack});
  const int64_t first_unit = units_seen_;
  WindowHooks hooks;
  hooks.window_tokens = [&](int64_t layer, size_t b, const LayerQkv& qkv) {
    unit_index_ = first_unit + static_cast<int64_t>(b);
    auto kept = select(backbone, layer, units[b], qkv);
    last_kept_[static_cast<size_t>(layer)] = kept;
    return kept;
  };
  auto outputs = window_.prefill(backbone, inputs, hooks);
  units_seen_ += static_cast<int64_t>(units.size());
  for (size_t i = 0; i < units.size(); ++i) {
    bank.add(rekv_unit_block(units[i], std::move(outputs[i])));
    next_position_ = std::max(next_position_, svqa::next_position(units[i].positions));
  }
}

void MemstreamAks::add_record_fields(nlohmann::json& extra) const {
  extra["memstream_aks"]["window_tokens"] = window_.attended_tokens(0);
}

}  // namespace svqa
