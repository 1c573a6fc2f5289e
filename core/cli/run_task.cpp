#include "core/cli/run_task.h"

#include <c10/core/InferenceMode.h>

#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <stdexcept>

#include "core/cli/cli_commands.h"
#include "core/config/grid.h"
#include "core/run/run_folder.h"
#include "core/run/shard/shard_merge.h"
#include "core/run/stream_runner.h"

namespace svqa {

namespace {

// A whole run over a folder whose streams are in shards not yet merged would answer them again.
void refuse_unmerged_shards(const std::string& dir) {
  const int64_t count = recorded_shard_count(dir);
  if (count && !std::filesystem::exists(dir + "/predictions.jsonl"))
    throw std::runtime_error(dir + ": holds the records of " + std::to_string(count) +
                             " stream shards, not merged: run the rest with --shard i/" + std::to_string(count) +
                             " or `svqa merge " + dir + "`; a whole run would answer their streams again");
}

}  // namespace

StreamShard shard_option(const std::string& text) {
  try {
    const auto [index, count] = parse_shard(text);
    return {index, count};
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

int run_task(const ExperimentConfig& cfg, const Registries& registries, const std::string& dir, const StreamShard& shard,
             const std::string& command) {
  apply_runtime(cfg.header.runtime);
  c10::InferenceMode inference;
  if (shard.count == 1) {
    refuse_unmerged_shards(dir);
    const RunFolder folder(dir, cfg.complete, command);  // locked; config written only if new
    return run_streams(cfg, registries, dir, std::cout, isatty(STDOUT_FILENO));
  }
  check_shard_fits(dir, shard);
  int errors = 0;
  {
    const RunFolder folder(dir, cfg.complete, command + " --shard " + shard.name(), folder_part(shard));
    const RunPart part = run_part(dir, shard);
    errors = run_streams(cfg, registries, dir, std::cout, isatty(STDOUT_FILENO), &part);
    std::cout << "stream shard " << shard.name() << " done: " << part.records << "\n";
  }
  merge_if_complete(cfg, registries, dir, shard.count, std::cout);
  return errors;
}

}  // namespace svqa
