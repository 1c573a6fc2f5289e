#include "strategies/encoding/streamkv/streamkv_segments.h"

#include <algorithm>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/nn/attention.h"
#include "models/backbones/full_context.h"
#include "strategies/kit/layer_budget.h"

namespace svqa {

const char* const kStreamkvGuidancePrompt =
    "For this event segment in the video, please prioritize retaining the following visual information:1)Key "
    "objects, people, and their attributes, and any changes or transitions during the event.2)Major actions, state "
    "transitions, and interactions (e.g., who/what is doing what, when, and where), including the precise timing of "
    "key moments.3)On-screen text, numbers, and all visible cues (such as labels, scores, timer, signs, etc.).4)Causal "
    "relationships, outcome(s), anomalies, and salient shifts within the segment (e.g., cause-effect chains, rare or "
    "surprising events, turning points).5)Counts and spatial arrangements of important objects or people, as well as "
    "layout details that may support summarization, prediction, or sequential reasoning in later queries.6)Any "
    "misleading, ambiguous, or easily confused visual clues\u2014ensure enough context is preserved to distinguish the "
    "current event state from similar past/future states.";

void StreamkvOptions::declare(Schema<StreamkvOptions>& s) {
  s.field("n_local", &StreamkvOptions::n_local, "local attention window in tokens (reference: 15000)").min(1)
        .max(kMaxTokensOption);
  declare_window_rules(s);
  s.field("segment_mode", &StreamkvOptions::segment_mode,
          "semantic: cut where adjacent frames differ (cosine of token means ≤ segment_theta); uniform: every "
          "max_segment_size frames (the paper's ablation)")
      .one_of({"semantic", "uniform"});
  s.field("min_segment_size", &StreamkvOptions::min_segment_size, "m: frames a segment holds before a cut is allowed")
      .min(1)
        .max(kMaxBlocksOption);
  s.field("max_segment_size", &StreamkvOptions::max_segment_size,
          "M: entries a segment holds; a full segment merges its most similar adjacent pair")
      .min(1)
        .max(kMaxBlocksOption);
  s.field("segment_theta", &StreamkvOptions::segment_theta, "θ: a cut needs the adjacent-frame cosine ≤ θ")
      .min(-1)
      .max(1);
  s.field("summary", &StreamkvOptions::summary,
          "encode a summary frame (mean of the segment's entries) after every segment, kept in every layer");
  s.field("keep_fraction", &StreamkvOptions::keep_fraction,
          "fraction of a segment's frame blocks kept per layer on average (the reference code's "
          "--compression_ratio; the paper's \"↓60 %\" keeps 0.4); 1: no compression, no guidance prompt")
      .min(0)
      .max(1);
  s.field("compress_temp", &StreamkvOptions::compress_temp,
          "spread of per-layer keep counts: bounds [max(1, T·keep·(1 − t)), min(T, T·keep·(1 + t))]")
      .min(0)
        .max(100);
  s.field("layer_adaptive", &StreamkvOptions::layer_adaptive,
          "true: layer-adaptive keep counts from the guidance scores; false: every layer keeps max(1, ⌊T·keep⌋)");
  s.field("guidance_prompt", &StreamkvOptions::guidance_prompt,
          "text whose queries score a segment's frame blocks (default: the reference code's, verbatim)");
  s.check("max_segment_size", [](const StreamkvOptions& o) {
    return o.max_segment_size < o.min_segment_size ? "must be at least min_segment_size (" +
                                                         std::to_string(o.min_segment_size) + ")"
                                                   : std::string();
  });
  s.check("keep_fraction", [](const StreamkvOptions& o) {
    return o.keep_fraction <= 0 ? std::string("must be above 0") : std::string();
  });
}

namespace {

// A unit's positions laid at `start`: every row shifted so its smallest entry is `start`.
at::Tensor packed_positions(const at::Tensor& layout, int64_t start) {
  return layout - std::get<0>(layout.min(1, /*keepdim=*/true)) + start;
}

}  // namespace

StreamkvSegments::StreamkvSegments(StreamkvOptions options)
    : options_(std::move(options)),
      window_(options_.n_local, window_rules(options_)),
      segmenter_({options_.segment_mode, options_.min_segment_size, options_.max_segment_size, options_.segment_theta}) {}

void StreamkvSegments::begin_stream(Backbone& backbone, const std::vector<int64_t>& sink_ids, MemoryBank& bank) {
  (void)bank;
  window_.begin(backbone, sink_ids);
  segmenter_ = OnlineSegmenter({options_.segment_mode, options_.min_segment_size, options_.max_segment_size,
                                options_.segment_theta});
  open_units_.clear();
  records_.clear();
  flushed_ = -1;
  cursor_ = static_cast<int64_t>(sink_ids.size());
  guidance_ids_.clear();
  if (options_.keep_fraction < 1.0) {
    guidance_ids_ = backbone.tokenizer().encode(options_.guidance_prompt);
    if (guidance_ids_.empty()) throw std::invalid_argument("encoding.options.guidance_prompt: empty after tokenizing");
  }
}

void StreamkvSegments::encode(Backbone& backbone, const std::vector<VisualUnit>& units, MemoryBank& bank) {
  for (const auto& unit : units) {
    open_units_[segmenter_.pushed()] =
        UnitInfo{unit.positions.to(at::kCPU), unit.first_frame, unit.last_frame, unit.start_time, unit.end_time};
    if (auto closed = segmenter_.push(unit.tokens, unit.deepstack, unit.text_before, unit.text_after)) encode_segment(backbone, *closed, bank, false);
  }
}

const MemoryBank* StreamkvSegments::prepare_for_question(Backbone& backbone, const QuestionInfo& question,
                                                         MemoryBank& bank) {
  (void)question;
  flushed_ = -1;
  if (auto open = segmenter_.flush()) {
    encode_segment(backbone, *open, bank, true);
    flushed_ = static_cast<int64_t>(records_.size()) - 1;
  }
  return nullptr;
}

void StreamkvSegments::add_record_fields(nlohmann::json& extra) const {
  nlohmann::json flushed = nullptr;
  if (flushed_ >= 0) {
    const SegmentRecord& r = records_[static_cast<size_t>(flushed_)];
    flushed = {{"first_frame", r.first_frame}, {"last_frame", r.last_frame}, {"start_time", r.start_time},
               {"end_time", r.end_time}, {"entries", r.entries}, {"kept", r.kept}};
  }
  int64_t units = 0;
  for (const auto& r : records_) units += r.units;
  extra["streamkv_segments"] = {
      {"flushed", flushed},
      {"segments", records_.size()},
      {"mean_segment_units", records_.empty() ? 0.0 : static_cast<double>(units) / static_cast<double>(records_.size())}};
}

std::vector<int64_t> StreamkvSegments::allocation(const std::vector<at::Tensor>& scores, int64_t frames) const {
  const auto layers = static_cast<int64_t>(scores.size());
  const double keep = options_.keep_fraction, per_layer = static_cast<double>(frames) * keep;
  if (!options_.layer_adaptive)
    return std::vector<int64_t>(static_cast<size_t>(layers), std::max<int64_t>(1, static_cast<int64_t>(per_layer)));
  // The reference code: N = int(L·T·ratio), bounds from compress_temp, then at least one per layer.
  const auto target = static_cast<int64_t>(static_cast<double>(layers * frames) * keep);
  const int64_t lo = std::max<int64_t>(1, static_cast<int64_t>(per_layer * (1 - options_.compress_temp)));
  const int64_t hi = std::min<int64_t>(frames, static_cast<int64_t>(per_layer * (1 + options_.compress_temp)));
  auto k = rescale_sum_match(cdf_layer_counts(scores, target), static_cast<double>(lo), static_cast<double>(hi));
  for (auto& v : k) v = std::max<int64_t>(v, 1);
  return k;
}

void StreamkvSegments::segment_inputs(const Segment& segment, std::vector<WindowInput>& inputs,
                                      std::vector<UnitInfo>& spans) {
  for (const auto& entry : segment.entries) {
    UnitInfo span = open_units_.at(entry.units.front());
    for (const int64_t u : entry.units) widen_span(span, open_units_.at(u));
    span.positions = packed_positions(span.positions, cursor_);
    cursor_ = svqa::next_position(span.positions);
    inputs.push_back({entry.features, span.positions, entry.deepstack});
    spans.push_back(span);
  }
  if (!options_.summary) return;
  UnitInfo span{packed_positions(spans.back().positions, cursor_), spans.front().first_frame,
                spans.back().last_frame, spans.front().start_time, spans.back().end_time};
  cursor_ = svqa::next_position(span.positions);
  // The summary frame: the mean of the entries (its text, laid out as the last span, the last entry's).
  const auto summary = mean_entry(segment.entries, segment.entries.size() - 1);
  inputs.push_back({summary.features, span.positions, summary.deepstack});
  spans.push_back(span);
}

WindowHooks StreamkvSegments::guidance_hooks(Backbone& backbone, const std::vector<WindowInput>& inputs, int64_t frames,
                                             GuidanceTables& tables, std::vector<at::Tensor>& scores) const {
  WindowHooks hooks;
  const auto n_guide = static_cast<int64_t>(guidance_ids_.size());
  hooks.follower = backbone.embed(at::tensor(guidance_ids_, at::kLong));
  std::vector<at::Tensor> laid;
  for (const auto& in : inputs) laid.push_back(in.positions);
  auto positions = at::cat(laid, 1);
  positions = at::cat({positions, text_positions(svqa::next_position(positions), n_guide)}, 1);
  tables.input = text_rotary(backbone.manifest()).tables((positions - positions.min()).to(backbone.device()));
  tables.guide = {tables.input.cos.narrow(0, positions.size(1) - n_guide, n_guide),
                  tables.input.sin.narrow(0, positions.size(1) - n_guide, n_guide)};
  const int64_t n_local = options_.n_local;
  hooks.follow = [&tables, &scores, frames, n_local](int64_t l, const LayerQkv& qkv, const std::vector<LayerQkv>& blocks) {
    std::vector<at::Tensor> ks, vs, reps;
    for (const auto& b : blocks) ks.push_back(b.k), vs.push_back(b.v);
    ks.push_back(qkv.k);
    vs.push_back(qkv.v);
    const auto out = attend(apply_rotary(qkv.q, tables.guide), apply_rotary(at::cat(ks), tables.input), at::cat(vs),
                            AttentionMask{true, n_local, 0});
    const auto g = grouped_query(qkv.q.to(at::kFloat).mean(0), qkv.k.size(1));  // un-rotated
    for (int64_t i = 0; i < frames; ++i) reps.push_back(mean_key_representative(blocks[i].k));
    scores[static_cast<size_t>(l)] = at::matmul(at::stack(reps), g);  // read back once, in layer_keep
    return out.out;
  };
  return hooks;
}

std::vector<std::vector<bool>> StreamkvSegments::layer_keep(const std::vector<at::Tensor>& device_scores,
                                                            int64_t layers, int64_t frames, SegmentRecord& record) const {
  std::vector<std::vector<bool>> keep(static_cast<size_t>(layers), std::vector<bool>(static_cast<size_t>(frames), true));
  if (options_.keep_fraction >= 1.0) {
    record.kept.assign(static_cast<size_t>(layers), frames);
    return keep;
  }
  // Every layer's scores back to the host in one copy (on a GPU one wait per segment, not one per layer).
  const std::vector<at::Tensor> scores = at::stack(device_scores).to(at::kCPU, at::kFloat).contiguous().unbind(0);
  record.kept = allocation(scores, frames);
  for (int64_t l = 0; l < layers; ++l) {
    const auto& s = scores[static_cast<size_t>(l)];
    record.scores.emplace_back(s.data_ptr<float>(), s.data_ptr<float>() + frames);
    const auto top = std::get<1>(at::topk(s, record.kept[static_cast<size_t>(l)])).contiguous();
    keep[static_cast<size_t>(l)].assign(static_cast<size_t>(frames), false);
    const int64_t* chosen = top.data_ptr<int64_t>();
    for (int64_t j = 0; j < top.size(0); ++j) keep[static_cast<size_t>(l)][static_cast<size_t>(chosen[j])] = true;
  }
  return keep;
}

void StreamkvSegments::encode_segment(Backbone& backbone, const Segment& segment, MemoryBank& bank, bool flushed) {
  const int64_t layers = backbone.num_layers();
  const auto frames = static_cast<int64_t>(segment.entries.size());
  std::vector<WindowInput> inputs;
  std::vector<UnitInfo> spans;
  segment_inputs(segment, inputs, spans);

  // The guidance prompt, in the same forward: per layer it attends to this input only and scores the frame entries.
  std::vector<at::Tensor> scores(static_cast<size_t>(layers));
  GuidanceTables tables;
  const WindowHooks hooks =
      options_.keep_fraction < 1.0 ? guidance_hooks(backbone, inputs, frames, tables, scores) : WindowHooks{};
  auto outputs = window_.prefill(backbone, inputs, hooks);

  SegmentRecord record;
  record.first_frame = spans.front().first_frame;
  record.last_frame = spans[static_cast<size_t>(frames) - 1].last_frame;
  record.start_time = spans.front().start_time;
  record.end_time = spans[static_cast<size_t>(frames) - 1].end_time;
  for (const auto& entry : segment.entries) record.units += static_cast<int64_t>(entry.units.size());
  record.entries = frames;
  record.merges = static_cast<int64_t>(segment.merges.size());
  record.flushed = flushed;
  const auto keep = layer_keep(scores, layers, frames, record);

  for (size_t i = 0; i < inputs.size(); ++i) {
    const bool summary = static_cast<int64_t>(i) == frames;
    KvBlock block = empty_block(layers, summary ? Granularity::Summary : Granularity::Frame, spans[i].positions);
    block.first_frame = spans[i].first_frame, block.last_frame = spans[i].last_frame;
    block.start_time = spans[i].start_time, block.end_time = spans[i].end_time;
    bool stored = false;
    for (int64_t l = 0; l < layers; ++l) {
      if (!summary && !keep[static_cast<size_t>(l)][i]) continue;
      set_layer(block, l, std::move(outputs[i].keys[l]), std::move(outputs[i].values[l]));
      stored = true;
    }
    if (stored) record.block_ids.push_back(bank.add(std::move(block)));  // a frame no layer keeps is not stored
  }
  for (const auto& entry : segment.entries)
    for (const int64_t u : entry.units) open_units_.erase(u);
  records_.push_back(std::move(record));
}

}  // namespace svqa
