#pragma once
// A run's results folder, held for as long as the run writes into it:
// - an exclusive lock (flock on DIR/run.lock, released when the process ends, even by kill -9), so
//   a second svqa on the same folder stops at once and says who holds it, instead of answering
//   every question a second time;
// - the fully resolved config (defaults included: ExperimentConfig::complete), written when the folder
//   has none (or holds no answer yet). A folder whose answers were made with another config is refused,
//   naming the first key that differs (a default changed since counts): resuming would label those
//   answers with the new config. Keys that cannot change an answer (core/config/run_time_keys.h:
//   threads, ...) do not block; the file then records this session's values;
// - the identity of every model the config names (DIR/models.json: each export's files, sizes and
//   checksums, engine/snapshot/model_identity.h), checked the same way: a folder whose answers came from
//   an export since replaced at the same path is refused, naming it.

#include <string>

#include "core/config/config_node.h"

namespace svqa {

// The folder of this run's spill files inside a shared `stream.spill_dir`: named by the run folder's
// identity on this machine (host, device and inode of `dir`: "node7-2049-1835043"), so two runs with
// different --out never touch each other's blocks, and a rerun of the same folder reuses its own.
// `dir` must exist.
std::string spill_subfolder(const std::string& dir);

// What a process holds of the folder, as paths relative to it: the whole run, or one stream shard
// (app/run/shard/: its own lock and records file, so the shards of a run work side by side).
// Answers in any part's records (predictions.jsonl, DIR/shards/*.jsonl) make config.yaml binding.
struct FolderPart {
  std::string lock = "run.lock";
  std::string records = "predictions.jsonl";
};

class RunFolder {
 public:
  // Creates `dir` if needed, locks it, checks or writes DIR/config.yaml and DIR/models.json. `command` says what holds
  // the lock ("svqa run exp.yaml"). Throws std::runtime_error: one line naming the folder.
  RunFolder(const std::string& dir, const ConfigNode& resolved, const std::string& command, const FolderPart& part = {});
  ~RunFolder();
  RunFolder(const RunFolder&) = delete;
  RunFolder& operator=(const RunFolder&) = delete;

 private:
  int lock_fd_ = -1;
};

}  // namespace svqa
