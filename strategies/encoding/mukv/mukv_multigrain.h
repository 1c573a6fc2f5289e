#pragma once
// MuKV encoding (Xiao et al., CVPR 2026; reference code IMBALDY/MuKV): from one vision pass, KV
// blocks at three granularities — patch (a quarter of a frame: on LLaVA-OV the reference's 49-token
// raster bands of the 14×14 grid, or 7×7 quadrants), frame (one visual unit: a frame, or a two-frame
// temporal patch on Qwen2.5-VL) and segment (`segment_frames` frames, 784 tokens on LLaVA-OV) — each
// prefilled on its own over the sinks only (the reference; or over the earlier blocks of its
// granularity, the paper's wording), then compressed by dual-signal token selection
// (mukv_compression.h): a block keeps ⌊ρ_g·N⌋ of its tokens, the same ones in every layer.
// Representative (last layer only): the mean of the kept keys rotated at their encode positions,
// kv heads concatenated, as the reference keeps post-RoPE keys.

#include <cstdint>
#include <string>
#include <vector>

#include "core/config/schema.h"
#include "engine/strategy.h"
#include "core/nn/rope.h"
#include "strategies/encoding/mukv/mukv_block_prefill.h"

namespace svqa {

struct MukvKeepRatios {
  double patch = 0.1, frame = 0.1, segment = 0.8;
  static void declare(Schema<MukvKeepRatios>& s) {
    for (auto [name, member] : {std::pair{"patch", &MukvKeepRatios::patch}, std::pair{"frame", &MukvKeepRatios::frame},
                                std::pair{"segment", &MukvKeepRatios::segment}})
      s.field(name, member, std::string("ρ: share of a ") + name + " block's tokens kept (paper 0.1 / 0.1 / 0.8)")
          .min(1e-6)
          .max(1);
  }
};

struct MukvAlphas {
  double patch = 0.5, frame = 0.7, segment = 0.8;
  static void declare(Schema<MukvAlphas>& s) {
    for (auto [name, member] : {std::pair{"patch", &MukvAlphas::patch}, std::pair{"frame", &MukvAlphas::frame},
                                std::pair{"segment", &MukvAlphas::segment}})
      s.field(name, member, std::string("α: weight of attention vs frequency for ") + name + " blocks (paper 0.5 / 0.7 / 0.8)")
          .min(0)
          .max(1);
  }
};

struct MukvOptions {
  std::vector<std::string> granularities{"patch", "frame", "segment"};
  std::string patch_layout = "bands";
  int64_t segment_frames = 4;
  std::string context = "isolated";
  std::string segment_leftovers = "drop";
  MukvKeepRatios keep_ratio;
  MukvAlphas alpha;
  std::string importance = "fused";
  std::string frequency = "fft";
  std::string attention_layer = "last";
  bool dedup = false;
  double dedup_threshold = 0.9;
  static void declare(Schema<MukvOptions>& s);
};

class MukvMultigrain final : public EncodingStrategy {
 public:
  explicit MukvMultigrain(MukvOptions options);

  void begin_stream(Backbone& backbone, const std::vector<int64_t>& sink_ids, MemoryBank& bank) override;
  void encode(Backbone& backbone, const std::vector<VisualUnit>& units, MemoryBank& bank) override;
  const MemoryBank* prepare_for_question(Backbone& backbone, const QuestionInfo& question, MemoryBank& bank) override;
  const SinkKv& sinks() const override { return sinks_; }
  int64_t next_position() const override { return next_position_; }
  // Under "mukv_multigrain": the segment leftovers policy, frames awaiting their segment, frames dropped.
  void add_record_fields(nlohmann::json& extra) const override;

 private:
  // A block of `tokens` at `stream_positions` covering units first…last, placed and scored per the options.
  BlockInput block_input(Granularity g, const at::Tensor& tokens, const at::Tensor& stream_positions,
                         const at::Tensor& deepstack,
                         const VisualUnit& first, const VisualUnit& last) const;
  // Prefills blocks in the configured context and adds them to the bank.
  void prefill(Backbone& backbone, const std::vector<BlockInput>& blocks, MemoryBank& bank);
  void encode_segment(Backbone& backbone, MemoryBank& bank);
  // segment_leftovers: drop — the frames short of a segment leave the segment view.
  void drop_leftovers();
  // Token indices of the unit's four patches (bands or quadrants of its row-major grid).
  std::vector<at::Tensor> patch_indices(const VisualUnit& unit) const;
  // The same over the unit's n visual tokens, indices from 0.
  std::vector<at::Tensor> visual_patch_indices(const VisualUnit& unit, int64_t n) const;
  bool enabled(Granularity g) const;

  MukvOptions options_;
  std::vector<Granularity> granularities_;
  SinkKv sinks_;
  std::vector<at::Tensor> sink_keys_rotated_;  // per layer, on the device
  bool mrope_ = false;
  int64_t layers_ = 0;
  std::vector<std::pair<int64_t, double>> attention_layers_;  // (layer, weight) scoring the tokens
  // context: same_granularity — per granularity, per layer, the sinks and kept keys (rotated) and values so far.
  std::vector<std::vector<at::Tensor>> context_k_, context_v_;
  std::vector<VisualUnit> pending_;  // units of the segment being gathered
  int64_t pending_frames_ = 0, dropped_frames_ = 0, frames_per_unit_ = 1;
  int64_t next_position_ = 0;
};

}  // namespace svqa
