#include "strategies/encoding/mukv/mukv_multigrain.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "models/backbones/backbone.h"
#include "models/backbones/full_context.h"
#include "strategies/encoding/mukv/mukv_block_prefill.h"
#include "strategies/kit/sink_prefill.h"

namespace svqa {
namespace {

template <class PerGranularity>
auto pick(const PerGranularity& s, Granularity g) {
  return g == Granularity::Patch ? s.patch : g == Granularity::Frame ? s.frame : s.segment;
}

Granularity granularity_from_name(const std::string& name) {
  if (name == "patch") return Granularity::Patch;
  if (name == "frame") return Granularity::Frame;
  if (name == "segment") return Granularity::Segment;
  throw std::invalid_argument("mukv: unknown granularity '" + name + "' (expected patch, frame or segment)");
}

// Positions of a block prefilled on its own right after the sinks: 1-D, start…start+n−1 in token
// order; mRoPE, its (t, h, w) layout shifted so each axis starts at `start` (a video of its own).
at::Tensor isolated_positions(const at::Tensor& stream_positions, int64_t start, bool mrope) {
  if (!mrope) return text_positions(start, stream_positions.size(1));
  return stream_positions - std::get<0>(stream_positions.min(1, true)) + start;
}

}  // namespace

void MukvOptions::declare(Schema<MukvOptions>& s) {
  s.field("granularities", &MukvOptions::granularities,
          "views stored per stream: patch (a quarter of a frame), frame, segment (paper Table 2)")
      .one_of({"patch", "frame", "segment"});
  s.field("patch_layout", &MukvOptions::patch_layout,
          "bands: a frame's tokens cut in four row-major runs (the reference: 49 of 196, 3.5 rows); "
          "quadrants: the 2×2 quadrants of its grid (the paper's figure)")
      .one_of({"bands", "quadrants"});
  s.field("segment_frames", &MukvOptions::segment_frames,
          "F: frames per segment block (paper 4); a multiple of the backbone's frames per visual unit")
      .min(1)
        .max(4096);
  s.field("context", &MukvOptions::context,
          "isolated: every block prefilled over the sinks only (the reference); same_granularity: over the sinks "
          "and the kept tokens of the earlier blocks of its granularity (the paper's wording)")
      .one_of({"isolated", "same_granularity"});
  s.field("segment_leftovers", &MukvOptions::segment_leftovers,
          "frames short of a segment at the end of an encode chunk (stream.chunk_frames, the reference's 64) or "
          "when a question comes: drop them from the segment view (the reference: segments restart at every "
          "encode chunk), or carry them into the next segment")
      .one_of({"carry", "drop"});
  s.field("keep_ratio", &MukvOptions::keep_ratio, "ρ per granularity: share of tokens each block keeps");
  s.field("alpha", &MukvOptions::alpha, "α per granularity: attention's weight in the fused token score");
  s.field("importance", &MukvOptions::importance,
          "fused: α·attention + (1−α)·frequency, each min-max normalised (DCP); attention or frequency alone "
          "(paper Table 3)")
      .one_of({"fused", "attention", "frequency"});
  s.field("frequency", &MukvOptions::frequency,
          "fft: the reference scripts' high-pass score (upper half of each key channel's spectrum over tokens, "
          "per-token magnitude); diff: ‖k_t − k_{t−1}‖ (the reference loader's default)")
      .one_of({"fft", "diff"});
  s.field("attention_layer", &MukvOptions::attention_layer,
          "whose attention scores tokens: last (paper), second_last, middle, last_5 (weighted 0.1…0.3; paper Table 8)")
      .one_of({"last", "second_last", "middle", "last_5"});
  s.field("dedup", &MukvOptions::dedup,
          "drop near-duplicate tokens among the top 1.2·κ before keeping κ (off in the paper's scripts)");
  s.field("dedup_threshold", &MukvOptions::dedup_threshold,
          "cosine of two tokens' last-layer keys (mean over kv heads) above which they are duplicates")
      .min(-1)
      .max(1);
  s.check("granularities", [](const MukvOptions& o) {
    const std::set<std::string> unique(o.granularities.begin(), o.granularities.end());
    if (o.granularities.empty()) return std::string("must name at least one of patch, frame, segment");
    return unique.size() != o.granularities.size() ? std::string("names a granularity twice") : std::string();
  });
}

MukvMultigrain::MukvMultigrain(MukvOptions options) : options_(std::move(options)) {
  for (const auto g : {Granularity::Patch, Granularity::Frame, Granularity::Segment})
    if (std::count(options_.granularities.begin(), options_.granularities.end(), granularity_name(g)))
      granularities_.push_back(g);
  for (const auto& name : options_.granularities) granularity_from_name(name);  // an unknown name is an error
}

bool MukvMultigrain::enabled(Granularity g) const {
  return std::find(granularities_.begin(), granularities_.end(), g) != granularities_.end();
}

void MukvMultigrain::begin_stream(Backbone& backbone, const std::vector<int64_t>& sink_ids, MemoryBank& bank) {
  (void)bank;
  const auto& m = backbone.manifest();
  mrope_ = !m.text.mrope_section.empty();
  layers_ = backbone.num_layers();
  frames_per_unit_ = uses_temporal_patches(m) ? m.vision.temporal_patch_size : 1;
  if (enabled(Granularity::Segment) && options_.segment_frames % frames_per_unit_)
    throw std::invalid_argument("encoding.options.segment_frames: " + std::to_string(options_.segment_frames) +
                                " is not a multiple of the backbone's " + std::to_string(frames_per_unit_) +
                                " frames per visual unit");
  attention_layers_ = attention_layer_weights(attention_layers_from_name(options_.attention_layer), layers_);
  sinks_ = prefill_sinks(backbone, sink_ids);
  sink_keys_rotated_.assign(static_cast<size_t>(layers_), at::Tensor());
  if (sinks_.size()) {
    const auto tables = text_rotary(m).tables(sinks_.positions.to(backbone.device()));
    for (int64_t l = 0; l < layers_; ++l) sink_keys_rotated_[l] = apply_rotary(sinks_.keys[l], tables);
  }
  // same_granularity: each granularity's past starts as the sinks.
  context_k_.assign(kGranularities, sink_keys_rotated_);
  context_v_.assign(kGranularities, sinks_.values);
  pending_.clear();
  pending_frames_ = dropped_frames_ = 0;
  next_position_ = sinks_.size();
}

std::vector<at::Tensor> MukvMultigrain::patch_indices(const VisualUnit& unit) const {
  // Patches cut the visual tokens only (Qwen3-VL's timestamp text stays with the frame block).
  const int64_t n = unit.tokens.size(0) - unit.text_before - unit.text_after;
  std::vector<at::Tensor> out = visual_patch_indices(unit, n);
  for (auto& idx : out) idx = idx + unit.text_before;
  return out;
}

std::vector<at::Tensor> MukvMultigrain::visual_patch_indices(const VisualUnit& unit, int64_t n) const {
  std::vector<at::Tensor> out;
  if (options_.patch_layout == "bands") {
    for (int64_t b = 0; b < 4; ++b)
      if ((b + 1) * n / 4 > b * n / 4) out.push_back(at::arange(b * n / 4, (b + 1) * n / 4, at::kLong));
    return out;
  }
  // The unit's row-major grid: mRoPE positions give its rows; LLaVA-OV frames are square.
  int64_t rows = 0;
  if (mrope_) {
    const auto h = unit.positions[1].narrow(0, unit.text_before, n);
    rows = h.max().item<int64_t>() - h.min().item<int64_t>() + 1;
  } else {
    while ((rows + 1) * (rows + 1) <= n) ++rows;
  }
  if (rows == 0 || n % rows) throw std::invalid_argument("mukv: quadrants need a rectangular token grid, got " + std::to_string(n) + " tokens");
  const int64_t cols = n / rows;
  const int64_t row_cut = rows / 2, col_cut = cols / 2;
  for (const auto& [r0, r1] : {std::pair{int64_t{0}, row_cut}, std::pair{row_cut, rows}})
    for (const auto& [c0, c1] : {std::pair{int64_t{0}, col_cut}, std::pair{col_cut, cols}}) {
      if (r1 <= r0 || c1 <= c0) continue;
      out.push_back((at::arange(r0, r1, at::kLong).unsqueeze(1) * cols + at::arange(c0, c1, at::kLong).unsqueeze(0)).flatten());
    }
  return out;
}

void MukvMultigrain::encode(Backbone& backbone, const std::vector<VisualUnit>& units, MemoryBank& bank) {
  for (const auto& unit : units) {
    std::vector<BlockInput> blocks;  // the unit's patches and frame
    if (enabled(Granularity::Patch))
      for (const auto& idx : patch_indices(unit))
        blocks.push_back(block_input(Granularity::Patch, unit.tokens.index_select(0, idx.to(unit.tokens.device())),
                                     unit.positions.index_select(1, idx),
                                     unit.deepstack.defined() ? unit.deepstack.index_select(1, idx.to(unit.deepstack.device()))
                                                              : at::Tensor(),
                                     unit, unit));
    if (enabled(Granularity::Frame))
      blocks.push_back(block_input(Granularity::Frame, unit.tokens, unit.positions, unit.deepstack, unit, unit));
    prefill(backbone, blocks, bank);
    next_position_ = std::max(next_position_, svqa::next_position(unit.positions));
    if (!enabled(Granularity::Segment)) continue;
    pending_.push_back(unit);
    pending_frames_ += unit.last_frame - unit.first_frame + 1;
    if (pending_frames_ >= options_.segment_frames) encode_segment(backbone, bank);
  }
  // The reference cuts segments inside each encode chunk (`encode_video(..., encode_chunk_size=64)`:
  // tokens [b·784, (b+1)·784) of the chunk), so a chunk's last frames short of a segment are lost.
  drop_leftovers();
}

void MukvMultigrain::drop_leftovers() {
  if (options_.segment_leftovers != "drop") return;
  dropped_frames_ += pending_frames_;
  pending_.clear();
  pending_frames_ = 0;
}

void MukvMultigrain::encode_segment(Backbone& backbone, MemoryBank& bank) {
  std::vector<at::Tensor> tokens, positions, deepstack;
  for (const auto& u : pending_) {
    tokens.push_back(u.tokens), positions.push_back(u.positions);
    if (u.deepstack.defined()) deepstack.push_back(u.deepstack);
  }
  prefill(backbone,
          {block_input(Granularity::Segment, at::cat(tokens), at::cat(positions, 1),
                       deepstack.empty() ? at::Tensor() : at::cat(deepstack, 1), pending_.front(), pending_.back())},
          bank);
  pending_.clear();
  pending_frames_ = 0;
}

BlockInput MukvMultigrain::block_input(Granularity g, const at::Tensor& tokens, const at::Tensor& stream_positions,
                                       const at::Tensor& deepstack, const VisualUnit& first, const VisualUnit& last) const {
  BlockInput in;
  in.granularity = g;
  in.tokens = tokens;
  in.deepstack = deepstack;
  in.positions = options_.context == "same_granularity"
                     ? stream_positions.to(at::kCPU)
                     : isolated_positions(stream_positions.to(at::kCPU), sinks_.size(), mrope_);
  in.first_frame = first.first_frame, in.last_frame = last.last_frame;
  in.start_time = first.start_time, in.end_time = last.end_time;
  in.dcp = DcpSettings{importance_from_name(options_.importance), frequency_score_from_name(options_.frequency),
                       pick(options_.alpha, g), pick(options_.keep_ratio, g), options_.dedup, options_.dedup_threshold};
  return in;
}

void MukvMultigrain::prefill(Backbone& backbone, const std::vector<BlockInput>& blocks, MemoryBank& bank) {
  if (options_.context == "isolated") {  // independent blocks: one pass over the sinks
    for (auto& p : prefill_blocks(backbone, blocks, sink_keys_rotated_, sinks_.values, attention_layers_))
      bank.add(std::move(p.block));
    return;
  }
  for (const auto& in : blocks) {  // each over the sinks and the kept tokens of its granularity so far
    auto& ck = context_k_[static_cast<size_t>(in.granularity)];
    auto& cv = context_v_[static_cast<size_t>(in.granularity)];
    auto p = std::move(prefill_blocks(backbone, {in}, ck, cv, attention_layers_).front());
    for (int64_t l = 0; l < layers_; ++l) {
      ck[l] = ck[l].defined() ? at::cat({ck[l], p.rotated[l]}) : p.rotated[l];
      cv[l] = cv[l].defined() ? at::cat({cv[l], p.block.values[l]}) : p.block.values[l];
    }
    bank.add(std::move(p.block));
  }
}

const MemoryBank* MukvMultigrain::prepare_for_question(Backbone& backbone, const QuestionInfo& question,
                                                       MemoryBank& bank) {
  (void)backbone, (void)question, (void)bank;
  drop_leftovers();
  return nullptr;
}

void MukvMultigrain::add_record_fields(nlohmann::json& extra) const {
  if (!enabled(Granularity::Segment)) return;
  extra["mukv_multigrain"] = {{"segment_leftovers", options_.segment_leftovers},
                              {"frames_awaiting_segment", pending_frames_},
                              {"frames_dropped_from_segments", dropped_frames_}};
}

}  // namespace svqa
