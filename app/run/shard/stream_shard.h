#pragma once
// Stream shards: `svqa run --shard i/N` answers the streams of a run whose index in the benchmark's
// order is i modulo N, so N shards partition the streams exactly, and the same i/N always takes the
// same streams. A shard holds DIR/shards/i-of-N.lock and writes DIR/shards/i-of-N.jsonl (resumed
// as predictions.jsonl is); app/run/shard/shard_merge.h makes the run's records from them.

#include <cstddef>
#include <cstdint>
#include <string>

#include "app/run/run_folder.h"
#include "app/run/stream_runner.h"

namespace svqa {

struct StreamShard {
  int64_t index = 0;
  int64_t count = 1;
  bool takes(size_t stream) const { return static_cast<int64_t>(stream) % count == index; }
  std::string name() const { return std::to_string(index) + "/" + std::to_string(count); }  // "1/4"
  // Relative to the run folder, without extension: "shards/1-of-4".
  std::string stem() const { return "shards/" + std::to_string(index) + "-of-" + std::to_string(count); }
};

// A grid's runs x stream shards, numbered run by run: task k is run k / M, stream shard k % M of M
// (svqa grid --shard i/N takes the tasks k % N == i; svqa submit's array has one per task).
struct GridTask {
  size_t run;
  StreamShard shard;
};
inline GridTask grid_task(int64_t task, int64_t stream_shards) {
  return {static_cast<size_t>(task / stream_shards), {task % stream_shards, stream_shards}};
}

FolderPart folder_part(const StreamShard& shard);
RunPart run_part(const std::string& dir, const StreamShard& shard);

// The N of the shard records in DIR/shards (0: none). Throws std::runtime_error naming two files
// when records of different N are there (a stream would be in two of them).
int64_t recorded_shard_count(const std::string& dir);

// Refuses, in one line naming the shard and the file, a shard of a folder whose records were
// written by shards of another N: its streams would be answered a second time.
void check_shard_fits(const std::string& dir, const StreamShard& shard);

}  // namespace svqa
