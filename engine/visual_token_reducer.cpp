#include "engine/visual_token_reducer.h"

#include <stdexcept>
#include <string>

#include "models/backbones/backbone.h"

namespace svqa {
namespace {

// Checks what a reducer returned for a unit of `n` tokens.
void check_reduced(const ReducedTokens& r, int64_t n, int64_t hidden) {
  const int64_t k = r.rows.defined() ? r.rows.numel() : -1;
  if (k < 0 || r.rows.dim() != 1 || !r.tokens.defined() || r.tokens.dim() != 2 || r.tokens.size(0) != k ||
      r.tokens.size(1) != hidden)
    throw std::logic_error("visual token reducer: expected rows [k] and tokens [k, " + std::to_string(hidden) + "]");
  const auto rows = r.rows.to(at::kCPU, at::kLong);
  if (k > 0 && (rows.min().item<int64_t>() < 0 || rows.max().item<int64_t>() >= n ||
                (k > 1 && !(rows.slice(0, 1) > rows.slice(0, 0, k - 1)).all().item<bool>())))
    throw std::logic_error("visual token reducer: rows must ascend within [0, " + std::to_string(n) + ")");
}

}  // namespace

std::vector<VisualUnit> reduce_units(VisualTokenReducer& reducer, const std::vector<VisualUnit>& units, bool mrope) {
  std::vector<VisualUnit> out;
  out.reserve(units.size());
  int64_t next = -1;  // 1-D: the position the next kept token takes
  for (const VisualUnit& unit : units) {
    VisualUnit u = unit;
    if (!unit.tokens.defined()) {
      out.push_back(std::move(u));
      continue;
    }
    if (unit.text_before || unit.text_after)
      throw std::invalid_argument("visual token reducer: units with timestamp text (Qwen3-VL) are not supported");
    const ReducedTokens r = reducer.reduce(unit);
    check_reduced(r, unit.tokens.size(0), unit.tokens.size(1));
    const auto rows = r.rows.to(unit.tokens.device(), at::kLong);
    u.tokens = r.tokens.to(unit.tokens.device(), unit.tokens.scalar_type());
    if (unit.deepstack.defined()) u.deepstack = unit.deepstack.index_select(1, rows.to(unit.deepstack.device()));
    if (mrope) {
      u.positions = unit.positions.index_select(1, rows.to(unit.positions.device()));
    } else {
      if (next < 0) next = unit.positions[0][0].item<int64_t>();
      u.positions = at::arange(next, next + rows.numel(), unit.positions.options()).unsqueeze(0).expand({3, -1}).clone();
      next += rows.numel();
    }
    out.push_back(std::move(u));
  }
  return out;
}

void ReducingEncoder::begin_stream(Backbone& backbone, const std::vector<int64_t>& sink_ids, MemoryBank& bank) {
  reducer_->begin_stream();
  EncoderWrapper::begin_stream(backbone, sink_ids, bank);
}

void ReducingEncoder::encode(Backbone& backbone, const std::vector<VisualUnit>& units, MemoryBank& bank) {
  const bool mrope = !backbone.manifest().text.mrope_section.empty();
  EncoderWrapper::encode(backbone, reduce_units(*reducer_, units, mrope), bank);
}

}  // namespace svqa
