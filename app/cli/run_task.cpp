#include "app/cli/run_task.h"

#include <c10/core/InferenceMode.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <stdexcept>

#include "app/cli/cli_commands.h"
#include "core/config/grid.h"
#include "app/run/run_folder.h"
#include "app/run/shard/shard_merge.h"
#include "app/run/stream_runner.h"

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

// More shards than streams would give some shards nothing (and their names fill a line per shard).
void refuse_shards_beyond_streams(const ExperimentConfig& cfg, const Registries& registries, const StreamShard& shard) {
  const ComponentChoice& choice = *cfg.component("benchmark");
  const size_t streams = registries.benchmark.create(choice.type, choice.options)->streams().size();
  if (shard.count > static_cast<int64_t>(streams))
    throw std::runtime_error("--shard " + shard.name() + ": the run has " + std::to_string(streams) +
                             " streams, so at most " + std::to_string(std::max<size_t>(streams, 1)) +
                             " stream shards (each takes the streams whose index % N == i)");
}

// The questions whose input could not be read are asked again by the next run: this one fails.
int errors_or_faults(const RunOutcome& outcome, const std::string& dir) {
  if (outcome.faults)
    throw std::runtime_error(std::to_string(outcome.faults) + " questions not answered: their input could not be read (" +
                             outcome.first_fault + "); fault records in " + dir +
                             ": rerun to ask them again once the input is fixed");
  return outcome.errors;
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
    return errors_or_faults(run_streams(cfg, registries, dir, std::cout, isatty(STDOUT_FILENO)), dir + "/predictions.jsonl");
  }
  refuse_shards_beyond_streams(cfg, registries, shard);
  check_shard_fits(dir, shard);
  int errors = 0;
  {
    const RunFolder folder(dir, cfg.complete, command + " --shard " + shard.name(), folder_part(shard));
    const RunPart part = run_part(dir, shard);
    errors = errors_or_faults(run_streams(cfg, registries, dir, std::cout, isatty(STDOUT_FILENO), &part), part.records);
    std::cout << "stream shard " << shard.name() << " done: " << part.records << "\n";
  }
  merge_if_complete(cfg, registries, dir, shard.count, std::cout);
  return errors;
}

}  // namespace svqa
