#include "core/run/snapshot/snapshot_session.h"

#include "core/run/snapshot/recording_encoder.h"
#include "core/run/snapshot/replay_encoder.h"
#include "core/run/snapshot/snapshot_key.h"

namespace svqa {

SnapshotSession::SnapshotSession(const MemoryCache& cache, EncodingStrategy& encoder, nlohmann::json material,
                                 std::ostream& log)
    : cache_(cache), material_(std::move(material)), key_(snapshot_key(material_)) {
  if (auto found = cache_.find(key_, material_, log)) {
    replay_ = std::make_unique<ReplayEncoder>(encoder, std::move(found->events), found->data_path);
    return;
  }
  lock_.emplace(cache_, key_, log);  // another run may be encoding this stream: wait for it, then replay
  if (auto found = cache_.find(key_, material_, log)) {
    lock_.reset();
    replay_ = std::make_unique<ReplayEncoder>(encoder, std::move(found->events), found->data_path);
    return;
  }
  if (lock_->waited())
    log << "  memory cache: the process encoding this stream stopped without saving it (killed?): encoding it here\n";
  folder_ = cache_.begin_entry(key_);
  recording_ = std::make_unique<RecordingEncoder>(encoder, folder_ + "memory.kv");
}

SnapshotSession::~SnapshotSession() {
  recording_.reset();
  if (!folder_.empty()) cache_.abandon_entry(folder_);  // unfinished: the stream failed or the run stopped
}

EncodingStrategy& SnapshotSession::encoder() {
  if (replay_) return *replay_;
  return *recording_;
}

void SnapshotSession::finish() {
  if (!recording_) return;
  const nlohmann::json events = recording_->finish();
  cache_.commit_entry(key_, folder_, material_, events, recording_->data_bytes());
  folder_.clear();
  lock_.reset();
}

void SnapshotSession::drop() {
  if (replay_) cache_.remove(key_);
}

}  // namespace svqa
