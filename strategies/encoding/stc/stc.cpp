#include "strategies/encoding/stc/stc.h"

#include <stdexcept>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/visual_token_reducer.h"
#include "models/backbones/backbone.h"
#include "models/video/frame_preprocessor.h"
#include "strategies/encoding/stc/stc_cacher.h"
#include "strategies/encoding/stc/stc_pruner.h"
#include "strategies/kit/rekv_sliding_window.h"

namespace svqa {
namespace {

std::vector<int64_t> as_vector(const at::Tensor& rows) {
  const at::Tensor r = rows.to(at::kCPU, at::kLong).contiguous();
  return {r.data_ptr<int64_t>(), r.data_ptr<int64_t>() + r.numel()};
}

// The pruner, recording what it keeps of each frame when asked to.
class RecordingPruner final : public VisualTokenReducer {
 public:
  RecordingPruner(StcPrunerSettings settings, nlohmann::json* frames) : pruner_(settings), frames_(frames) {}
  void begin_stream() override { pruner_.begin_stream(); }
  ReducedTokens reduce(const VisualUnit& unit) override {
    ReducedTokens kept = pruner_.reduce(unit);
    if (frames_) (*frames_)[std::to_string(unit.first_frame)]["kept"] = as_vector(kept.rows);
    return kept;
  }

 private:
  StcPruner pruner_;
  nlohmann::json* frames_;
};

// The cacher in front of a ReducingEncoder (the pruner in front of ReKV's window).
class Stc final : public EncoderWrapper {
 public:
  explicit Stc(const StcOptions& o, std::unique_ptr<nlohmann::json> record, std::unique_ptr<EncodingStrategy> window)
      : EncoderWrapper(std::make_unique<ReducingEncoder>(
            std::make_unique<RecordingPruner>(StcPrunerSettings{o.tokens_per_frame, o.channel_keep_ratio}, record.get()),
            std::move(window))),
        cacher_({o.update_ratio, o.refresh_interval}), record_(std::move(record)) {}

  void begin_stream(Backbone& backbone, const std::vector<int64_t>& sink_ids, MemoryBank& bank) override {
    tower_ = backbone.vision_layers();
    if (!tower_)
      throw std::invalid_argument("encoding.type stc: the export " + backbone.manifest().dir +
                                  " has no layer-by-layer vision tower (manifest.json vision.layers; LLaVA-OneVision "
                                  "exports of this checkout's models/export have it)");
    cacher_.reset();
    count_ = 0;
    EncoderWrapper::begin_stream(backbone, sink_ids, bank);
  }

  void encode(Backbone& backbone, const std::vector<VisualUnit>& units, MemoryBank& bank) override {
    std::vector<VisualUnit> encoded = units;
    for (VisualUnit& unit : encoded) {
      const VisualInput input = preprocess_frames(unit.rgb, backbone.manifest().image);
      unit.tokens = cacher_.encode(*tower_, input.pixels, count_);
      if (record_) record_frame(unit.first_frame);
      ++count_;
    }
    EncoderWrapper::encode(backbone, encoded, bank);
  }

  const MemoryBank* prepare_for_question(Backbone& backbone, const QuestionInfo& question, MemoryBank& bank) override {
    const MemoryBank* own = EncoderWrapper::prepare_for_question(backbone, question, bank);
    count_ = 0;  // the next frames are a new encode_video call
    if (record_) question_record_ = std::exchange(*record_, nlohmann::json::object());
    return own;
  }

  // record_tokens: extra.stc.frames, {frame: {refresh, recomputed per vision layer, kept}} of the frames
  // encoded since the previous question.
  void add_record_fields(nlohmann::json& extra) const override {
    EncoderWrapper::add_record_fields(extra);
    if (record_) extra["stc"]["frames"] = question_record_;
  }

 private:
  void record_frame(int64_t frame) {
    nlohmann::json& f = (*record_)[std::to_string(frame)];
    f["refresh"] = cacher_.recomputed().empty();
    f["recomputed"] = nlohmann::json::array();
    for (const at::Tensor& rows : cacher_.recomputed()) f["recomputed"].push_back(as_vector(rows));
  }

  StcCacher cacher_;
  std::unique_ptr<nlohmann::json> record_;  // record_tokens: frames encoded since the last question
  nlohmann::json question_record_;          // …and those before the current question
  VisionLayers* tower_ = nullptr;
  int64_t count_ = 0;  // frames since the count last restarted
};

}  // namespace

EncoderProvides stc_provides(const StcOptions& o) {
  EncoderProvides p;  // ReKV's frame blocks, mean-key representatives
  p.traits.reads_visual_tokens = false;  // the cacher runs the tower itself, layer by layer
  p.traits.answer_window = o.answer_fallback ? o.n_local : 0;  // ReKV's window answering past n_local
  return p;
}

std::unique_ptr<EncodingStrategy> make_stc(const StcOptions& o) {
  RekvOptions window;
  window.n_local = o.n_local;
  window.positions = o.positions;
  window.sink_entry = o.sink_entry;
  window.answer_fallback = o.answer_fallback;
  return std::make_unique<Stc>(o, o.record_tokens ? std::make_unique<nlohmann::json>(nlohmann::json::object()) : nullptr,
                               std::make_unique<RekvSlidingWindow>(window));
}

}  // namespace svqa
