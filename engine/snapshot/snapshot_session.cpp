#include "engine/snapshot/snapshot_session.h"

#include "engine/snapshot/followed_snapshot.h"
#include "engine/snapshot/recording_encoder.h"
#include "engine/snapshot/replay_encoder.h"
#include "engine/snapshot/snapshot_key.h"

namespace svqa {

SnapshotSession::SnapshotSession(const MemoryCache& cache, EncodingStrategy& encoder, nlohmann::json material,
                                 double wait_s, std::ostream& log)
    : cache_(cache), material_(std::move(material)), key_(snapshot_key(material_)) {
  auto replay_finished = [&](CachedSnapshot found) {
    replay_ = std::make_unique<ReplayEncoder>(std::make_unique<FinishedLog>(std::move(found.events)),
                                              std::move(found.data));
  };
  bool writer_seen = false;
  for (;;) {
    if (auto found = cache_.find(key_, material_, log)) {
      replay_finished(std::move(*found));
      return;
    }
    if ((lock_ = cache_.try_lock(key_))) break;
    writer_seen = true;
    if (auto followed = FollowedSnapshot::follow(cache_, key_, material_, wait_s, log)) {
      const std::string data = followed->data_path();
      replay_ = std::make_unique<ReplayEncoder>(std::move(followed), data, /*growing=*/true);
      following_ = true;
      return;
    }
    // The writer let go of the lock before its log began: it finished (the entry is there) or died.
  }
  if (auto found = cache_.find(key_, material_, log)) {  // finished between the two looks
    lock_.reset();
    replay_finished(std::move(*found));
    return;
  }
  if (writer_seen) log << "  memory cache: " << kSnapshotWriterDied << "\n";
  folder_ = cache_.begin_entry(key_);
  recording_ = std::make_unique<RecordingEncoder>(encoder, folder_, material_);
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
