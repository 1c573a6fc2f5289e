#pragma once
// One stream's use of the memory cache: a matching snapshot replayed instead of encoding, or the
// encoding recorded into a new snapshot (with the entry's lock held, so a second run sharing the
// cache does not encode it too: it replays the snapshot as it is written, followed_snapshot.h).

#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/strategy.h"
#include "engine/snapshot/memory_cache.h"

namespace svqa {

class RecordingEncoder;
class ReplayEncoder;

class SnapshotSession {
 public:
  // Replays the entry for `material` if there is a sound one, else follows the process writing
  // it (waiting at most `wait_s` for each of its records: SnapshotWriterGone past that), else
  // records into a new one.
  SnapshotSession(const MemoryCache& cache, EncodingStrategy& encoder, nlohmann::json material, double wait_s,
                  std::ostream& log);
  ~SnapshotSession();
  SnapshotSession(const SnapshotSession&) = delete;
  SnapshotSession& operator=(const SnapshotSession&) = delete;

  // The strategy the stream runs with: the replay, or the configured one under a recorder.
  EncodingStrategy& encoder();
  bool replaying() const { return replay_ != nullptr; }
  // Replaying a snapshot another process is still writing.
  bool following() const { return following_; }
  const std::string& key() const { return key_; }
  // The stream is done: a recording becomes the cache's entry.
  void finish();
  // The snapshot replayed turned out damaged while answering: removed from the cache.
  void drop();

 private:
  const MemoryCache& cache_;
  nlohmann::json material_;
  std::string key_, folder_;
  std::unique_ptr<MemoryCache::Lock> lock_;  // held while recording
  bool following_ = false;
  std::unique_ptr<ReplayEncoder> replay_;
  std::unique_ptr<RecordingEncoder> recording_;
};

}  // namespace svqa
