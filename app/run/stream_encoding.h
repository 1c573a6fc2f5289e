#pragma once
// Encoding up to a time: one stream's frames go through the vision tower, the encoding strategy
// (into the stream's memory bank) and the retrieval strategy's observe(), only as far as a
// question's time, never past it.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "engine/strategy.h"
#include "engine/visual_units.h"
#include "core/memory/memory_bank.h"
#include "app/run/frame_rule.h"
#include "models/backbones/backbone.h"
#include "models/video/frame_source.h"

namespace svqa {

class StreamEncoding {
 public:
  // A new stream: an empty bank, the encoder's sinks prefilled from `sink_ids`, retrieval reset.
  // `chunk_frames` frames go through the vision tower at a time (rounded down to whole units).
  // Frames come from `frames` as far as the questions need them (decoded as the stream advances),
  // sampled at `fps`; `rule` says which frames come before a question. `visual_tokens`: whether the
  // encoder reads the units' visual tokens (EncoderTraits::reads_visual_tokens, and not a snapshot's
  // replay); false spares the vision tower.
  StreamEncoding(Backbone& backbone, EncodingStrategy& encoder, RetrievalStrategy& retrieval,
                 std::unique_ptr<FrameReader> frames, const std::vector<int64_t>& sink_ids,
                 MemoryBankOptions bank_options, int64_t chunk_frames, FrameRule rule, double fps,
                 bool visual_tokens = true);

  struct Step {
    double seconds = 0;  // wall time of this encode_until
    int64_t frames = 0;  // frames it encoded
  };
  // Called after each chunk: frames encoded so far, of all, and this step's rate in frames per second.
  using ChunkDone = std::function<void(int64_t encoded, int64_t total, double fps)>;

  // Encodes every whole unit whose frames all come before a question at `time` (seconds into the
  // stream) under the frame rule.
  Step encode_until(double time, const ChunkDone& chunk_done = {});
  // Whether a question at `time` may see all of block `b`'s frames (the run's causality check).
  bool block_before_question(const KvBlock& b, double time) const {
    return svqa::block_before_question(rule_, fps_, b, time);
  }

  // After the last frame: known once the source has been read to its end (encode_until past it).
  std::optional<double> video_end() const { return ended_ ? std::optional<double>(video_end_) : std::nullopt; }
  int64_t encoded() const { return encoded_; }
  // How far past `time` the frames encoded so far were presented (their PTS), 0 when none was:
  // always 0 under frame_times presented; the stride rule's stamps can run ahead of the picture.
  double future_s(double time) const { return encoded_ > 0 ? std::max(0.0, last_presented_ - time) : 0.0; }
  int64_t total_frames() const { return std::max(frames_->expected_frames(), encoded_); }  // as the source says
  MemoryBank& bank() { return bank_; }

 private:
  Backbone& backbone_;
  EncodingStrategy& encoder_;
  RetrievalStrategy& retrieval_;
  std::unique_ptr<FrameReader> frames_;
  MemoryBank bank_;
  int64_t frames_per_unit_ = 1, video_start_ = 0, chunk_ = 1, encoded_ = 0;
  bool ended_ = false;
  double video_end_ = 0;
  double last_presented_ = 0;  // the latest presentation time among the frames encoded
  FrameRule rule_;
  double fps_;
  bool visual_tokens_ = true;
};

}  // namespace svqa
