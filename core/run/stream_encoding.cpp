#include "core/run/stream_encoding.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace svqa {

StreamEncoding::StreamEncoding(Backbone& backbone, EncodingStrategy& encoder, RetrievalStrategy& retrieval,
                               Frames frames, const std::vector<int64_t>& sink_ids, MemoryBankOptions bank_options,
                               int64_t chunk_frames)
    : backbone_(backbone),
      encoder_(encoder),
      retrieval_(retrieval),
      frames_(std::move(frames)),
      bank_(std::move(bank_options)),
      units_(backbone, frames_) {
  encoder_.begin_stream(backbone_, sink_ids, bank_);
  retrieval_.begin_stream();
  video_start_ = encoder_.sinks().size();
  const int64_t unit = units_.frames_per_unit();
  chunk_ = std::max<int64_t>(unit, chunk_frames - chunk_frames % unit);
}

StreamEncoding::Step StreamEncoding::encode_until(double time, const ChunkDone& chunk_done) {
  const int64_t n = total_frames();
  int64_t visible = 0;
  while (visible < n && frames_.timestamps[static_cast<size_t>(visible)] <= time) ++visible;
  visible -= visible % units_.frames_per_unit();
  const auto t0 = std::chrono::steady_clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  const int64_t before = encoded_;
  while (encoded_ < visible) {
    const int64_t count = std::min(chunk_, visible - encoded_);
    const auto batch = units_.make(encoded_, count, video_start_, encoder_.next_position());
    encoder_.encode(backbone_, batch, bank_);
    for (const auto& u : batch) retrieval_.observe(u);
    encoded_ += count;
    if (chunk_done) chunk_done(encoded_, n, static_cast<double>(encoded_ - before) / seconds());
  }
  return {seconds(), encoded_ - before};
}

}  // namespace svqa
