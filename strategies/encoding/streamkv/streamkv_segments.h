#pragma once
// StreamKV encoding (Chen et al., AAAI 2026; reference code sou1p0wer/StreamKV @ b0dbe3f): the stream
// is cut online into semantic segments (semantic_segmenter.h); a segment is encoded when it closes
// or when a question is coming, through ReKV's sliding window (sliding_window.h) as
// [its entries; a summary frame], the summary being the mean of the entries per token position,
// stored as one more block (granularity `summary`, never compressed). With keep_fraction < 1 the
// reference code's guidance prompt follows in the same forward: at every layer its queries attend
// only to this input (positions from 0; its K/V are never stored), the mean of its un-rotated
// queries scores the segment's frame blocks (dot product with their representative keys), and the
// layer-adaptive budget (layer_budget.h) decides how many each layer keeps: a frame block may be
// stored in some layers only.
//
// Positions: entries and summaries are laid back to back after the sinks (1-D RoPE); under mRoPE
// each is laid like one image (t, h, w each starting at the next free position), since merged
// entries and summary frames have no place on the stream's time axis.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/config/schema.h"
#include "engine/strategy.h"
#include "strategies/encoding/streamkv/semantic_segmenter.h"
#include "strategies/kit/sliding_window.h"

namespace svqa {

// The reference code's guidance prompt (`encode_prompt` in model/llava_onevision_streamkv.py), verbatim.
extern const char* const kStreamkvGuidancePrompt;

struct StreamkvOptions {
  int64_t n_local = 15000;
  std::string segment_mode = "semantic";
  int64_t min_segment_size = 4;
  int64_t max_segment_size = 64;
  double segment_theta = 0.99;
  bool summary = true;
  double keep_fraction = 0.6;
  double compress_temp = 1.0;
  bool layer_adaptive = true;
  std::string guidance_prompt = kStreamkvGuidancePrompt;
  std::string positions = "window";
  std::string sink_entry = "all_at_once_stay";  // StreamKV's ContextManager (sliding_window.h)
  static void declare(Schema<StreamkvOptions>& s);
};

// What happened to one segment, for tests and analysis.
struct SegmentRecord {
  int64_t first_frame = 0, last_frame = 0;
  double start_time = 0, end_time = 0;
  int64_t units = 0;                        // units pushed into it (more than entries when merged)
  int64_t entries = 0, merges = 0;
  bool flushed = false;                     // closed because a question was coming
  std::vector<std::vector<double>> scores;  // per layer, the guidance score of each frame entry (compression on)
  std::vector<int64_t> kept;                // per layer, frame blocks kept (all of them when compression is off)
  std::vector<int64_t> block_ids;           // bank ids of its stored blocks: frame entries, then the summary
};

class StreamkvSegments final : public EncodingStrategy {
 public:
  explicit StreamkvSegments(StreamkvOptions options);

  void begin_stream(Backbone& backbone, const std::vector<int64_t>& sink_ids, MemoryBank& bank) override;
  void encode(Backbone& backbone, const std::vector<VisualUnit>& units, MemoryBank& bank) override;
  // A question is coming: the open segment is encoded now (it never waits for frames after the question).
  const MemoryBank* prepare_for_question(Backbone& backbone, const QuestionInfo& question, MemoryBank& bank) override;
  // Under "streamkv_segments": the segment this question flushed (or null), segments so far, their mean length.
  void add_record_fields(nlohmann::json& extra) const override;
  const SinkKv& sinks() const override { return window_.sinks(); }
  int64_t next_position() const override { return cursor_; }

  const std::vector<SegmentRecord>& segments() const { return records_; }

 private:
  struct UnitInfo {
    at::Tensor positions;
    int64_t first_frame = 0, last_frame = 0;
    double start_time = 0, end_time = 0;
  };
  // The guidance prompt's rotary tables: over the segment's input then itself, and its own rows.
  struct GuidanceTables {
    RotaryTables input, guide;
  };
  void encode_segment(Backbone& backbone, const Segment& segment, MemoryBank& bank, bool flushed);
  // The segment's input: every entry (spanning the frames merged into it), then the summary frame.
  void segment_inputs(const Segment& segment, std::vector<WindowInput>& inputs, std::vector<UnitInfo>& spans);
  // Hooks that run the guidance prompt in the same forward and fill scores[l] for the frame entries.
  WindowHooks guidance_hooks(Backbone& backbone, const std::vector<WindowInput>& inputs, int64_t frames,
                             GuidanceTables& tables, std::vector<at::Tensor>& scores) const;
  // keep[l][i]: frame entry i is stored in layer l (the record gains the kept counts and scores).
  std::vector<std::vector<bool>> layer_keep(const std::vector<at::Tensor>& scores, int64_t layers, int64_t frames,
                                            SegmentRecord& record) const;
  // Per layer, how many of a segment's `frames` frame blocks each layer keeps, from the guidance scores.
  std::vector<int64_t> allocation(const std::vector<at::Tensor>& scores, int64_t frames) const;

  StreamkvOptions options_;
  SlidingWindow window_;
  OnlineSegmenter segmenter_;
  std::map<int64_t, UnitInfo> open_units_;  // pushed units not yet encoded, by push index
  std::vector<int64_t> guidance_ids_;
  int64_t cursor_ = 0;
  std::vector<SegmentRecord> records_;
  int64_t flushed_ = -1;  // the record of the segment the current question flushed; -1: none
};

}  // namespace svqa
