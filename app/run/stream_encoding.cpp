#include "app/run/stream_encoding.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace svqa {

StreamEncoding::StreamEncoding(Backbone& backbone, EncodingStrategy& encoder, RetrievalStrategy& retrieval,
                               std::unique_ptr<FrameReader> frames, const std::vector<int64_t>& sink_ids,
                               MemoryBankOptions bank_options, int64_t chunk_frames, FrameRule rule, double fps,
                               bool visual_tokens)
    : backbone_(backbone),
      encoder_(encoder),
      retrieval_(retrieval),
      frames_(std::move(frames)),
      bank_(std::move(bank_options)),
      frames_per_unit_(VisualUnitMaker::frames_per_unit_of(backbone)),
      rule_(rule),
      fps_(fps),
      visual_tokens_(visual_tokens) {
  encoder_.begin_stream(backbone_, sink_ids, bank_);
  retrieval_.begin_stream();
  video_start_ = encoder_.sinks().size();
  chunk_ = std::max<int64_t>(frames_per_unit_, chunk_frames - chunk_frames % frames_per_unit_);
}

StreamEncoding::Step StreamEncoding::encode_until(double time, const ChunkDone& chunk_done) {
  const auto t0 = std::chrono::steady_clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  const int64_t before = encoded_;
  for (;;) {
    // Whole units whose frames all come before the question, a chunk at most.
    int64_t count = 0;
    while (count + frames_per_unit_ <= chunk_) {
      const int64_t last_index = count + frames_per_unit_ - 1;
      const auto last = frames_->upcoming_time(last_index);
      if (!last || !frame_before_question(rule_, fps_, encoded_ + last_index, *last, time)) break;
      count += frames_per_unit_;
    }
    if (count == 0) break;
    const Frames chunk = frames_->read(count);
    video_end_ = chunk.timestamps.back() + 1.0 / chunk.fps;
    for (size_t i = 0; i < chunk.timestamps.size(); ++i) last_presented_ = std::max(last_presented_, chunk.presented_at(i));
    VisualUnitMaker units(backbone_, chunk, frames_->expected_frames());
    const auto batch = units.make(encoded_, count, video_start_, encoder_.next_position(), visual_tokens_);
    encoder_.encode(backbone_, batch, bank_);
    for (const auto& u : batch) retrieval_.observe(u);
    encoded_ += count;
    if (chunk_done) chunk_done(encoded_, total_frames(), static_cast<double>(encoded_ - before) / seconds());
  }
  // Fewer frames left than a unit (or none): the stream ends here.
  if (!frames_->upcoming_time(frames_per_unit_ - 1)) {
    const auto left = frames_->read(frames_per_unit_);  // a trailing partial unit is never encoded
    if (left.rgb.defined()) video_end_ = left.timestamps.back() + 1.0 / left.fps;
    ended_ = true;
  }
  return {seconds(), encoded_ - before};
}

}  // namespace svqa
