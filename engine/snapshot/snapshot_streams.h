#pragma once
// A run's side of the memory cache (`memory.cache`): which streams may use it, the key material
// of each, and one log line per stream saying whether it was encoded or answered from a snapshot.

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/experiment.h"
#include "core/config/registry.h"
#include "engine/benchmark.h"
#include "core/io/environment_error.h"
#include "engine/snapshot/memory_cache.h"
#include "engine/snapshot/snapshot_session.h"

namespace svqa {

class SnapshotStreams {
 public:
  // `dir`: the run folder (its models.json names the export's files and checksums); `registries`:
  // what the backbone and the encoder declare they read beyond their sections (declared_reads.h).
  SnapshotStreams(const ExperimentConfig& cfg, const RegistrySections& registries, const std::string& dir,
                  std::ostream& log);

  // The stream's session, or nullptr when the cache is off (or the encoder's memory cannot be saved).
  // `asked`: every question of the stream in the order asked (none answered yet).
  std::unique_ptr<SnapshotSession> open(const Stream& stream, const std::vector<Question>& asked,
                                        const std::vector<int64_t>& sink_ids, EncodingStrategy& encoder);
  // The stream is done: a recording is saved; either way, one line says what happened.
  void finish(SnapshotSession& session, const std::string& stream_id);
  // Whether `e` says the snapshot being replayed is damaged (a checksum that differs, a log that
  // does not fit): then it is removed from the cache with one line naming it, and the caller
  // encodes the stream instead.
  bool drop_if_damaged(const EnvironmentError& e);

 private:
  const ExperimentConfig& cfg_;
  std::ostream& log_;
  std::unique_ptr<MemoryCache> cache_;
  nlohmann::json export_identity_;
  nlohmann::json declared_;  // {leaf: value} the backbone's and the encoder's memory depend on
  std::string replaying_;  // key of the snapshot the current stream replays; empty: none
};

}  // namespace svqa
