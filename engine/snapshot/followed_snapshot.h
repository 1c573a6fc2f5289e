#pragma once
// A memory snapshot read while another process writes it (`svqa encode`, or a grid shard that
// took the entry's lock first): its log.jsonl (live_log.h) followed record by record, so a run
// answers each question once the writer has logged the calls up to that question's time. Each
// wait for the writer's next record is bounded by `memory.wait_s`; a writer that released the
// entry's lock without finishing (killed) ends the wait at once.

#include <chrono>
#include <deque>
#include <memory>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/io/environment_error.h"
#include "engine/snapshot/live_log.h"
#include "engine/snapshot/memory_cache.h"
#include "engine/snapshot/replay_encoder.h"

namespace svqa {

inline constexpr const char* kSnapshotWriterDied =
    "the process encoding this stream stopped without saving it (killed?): encoding it here";

// The writer of a followed snapshot stopped or stalled: the run encodes the stream itself.
class SnapshotWriterGone : public EnvironmentError {
 public:
  SnapshotWriterGone(const std::string& what, bool died) : EnvironmentError(what), died_(died) {}
  // The writer released the entry's lock without finishing (killed): this run may encode the
  // stream and save it. Else it still holds the lock (memory.wait_s passed): encode, save nothing.
  bool died() const { return died_; }

 private:
  bool died_;
};

class FollowedSnapshot final : public SnapshotEvents {
 public:
  // Follows the process holding entry `key`'s lock, once its log has begun; nullptr when no
  // process holds the lock any more (it finished, or died before writing: the caller looks
  // again). Throws SnapshotWriterGone when wait_s passes first.
  static std::unique_ptr<FollowedSnapshot> follow(const MemoryCache& cache, const std::string& key,
                                                  const nlohmann::json& material, double wait_s, std::ostream& log);
  ~FollowedSnapshot() override;

  // Waits, saying so once on the log, until the writer logged entry `i` or its last; throws
  // SnapshotWriterGone when it died first or logged nothing for wait_s seconds.
  const nlohmann::json* entry(size_t i, const std::string& wanted) override;
  // The writer's data file, by a hard link of this process (DIR/<key>.reading.<pid>.kv) that
  // outlives the writer's rename of its folder into the entry.
  const std::string& data_path() const { return link_; }

 private:
  FollowedSnapshot(const MemoryCache& cache, std::string key, nlohmann::json material, double wait_s,
                   std::ostream& log, std::unique_ptr<LiveLogReader> reader, std::string link);
  // Takes the records logged since the last look; whether there were any.
  bool take_new();

  const MemoryCache& cache_;
  const std::string key_;
  const double wait_s_;
  std::ostream& log_;
  std::unique_ptr<LiveLogReader> reader_;
  std::string link_;
  nlohmann::json material_;            // the key the log must begin with
  bool header_seen_ = false;
  std::deque<nlohmann::json> events_;  // the calls logged and not yet replayed (a deque: entries stay where they are)
  size_t dropped_ = 0;                 // entries replayed and dropped from the front
  bool ended_ = false;                 // the writer logged its last call
};

}  // namespace svqa
