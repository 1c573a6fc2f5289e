#pragma once
// Closing a run answered in stream shards (app/run/shard/stream_shard.h): the union of the
// shards' records, checked (every stream's questions from its own shard, each once), becomes
// DIR/predictions.jsonl, and metrics.json and scores.json are written from it as an unsharded run
// writes them. The last shard to finish merges; `svqa merge RUN` does it on demand.

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "core/config/experiment.h"
#include "engine/benchmark.h"
#include "engine/registries.h"
#include "app/run/prediction_record.h"
#include "app/run/shard/stream_shard.h"

namespace svqa {

// How far one shard is: the questions of its streams recorded in its file, of those asked.
struct ShardProgress {
  bool started = false;  // its records file exists
  int64_t recorded = 0;
  int64_t questions = 0;
  bool complete() const { return started && recorded >= questions; }
};
ShardProgress shard_progress(const std::vector<Stream>& streams, const std::string& dir, const StreamShard& shard);

// The run's records from the files of its `count` shards, in the order an unsharded run writes
// them (streams in the benchmark's order). Throws std::runtime_error, one line naming the shard,
// when a shard's file is missing, a shard is incomplete, a shard's file holds a stream of another
// shard, or a question is recorded twice. A record of a question the benchmark does not ask (its
// annotation changed after the shard answered it) is left out, named in `left_out`.
std::vector<PredictionRecord> gather_shard_records(const std::vector<Stream>& streams, const std::string& dir,
                                                   int64_t count, std::vector<std::string>& left_out);

// Merges DIR's shards (their N read from DIR/shards) into predictions.jsonl, metrics.json and
// scores.json, atomically, holding DIR/merge.lock (two shards ending together merge one after the
// other, and write the same files). Throws as gather_shard_records does.
void merge_run(const ExperimentConfig& cfg, const Registries& registries, const std::string& dir, std::ostream& log);

// The last shard to finish closes the run: merges when every one of the `count` shards is
// complete, else logs which are not. Returns whether it merged.
bool merge_if_complete(const ExperimentConfig& cfg, const Registries& registries, const std::string& dir,
                       int64_t count, std::ostream& log);

}  // namespace svqa
