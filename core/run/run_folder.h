#pragma once
// A run's results folder, held for as long as the run writes into it:
// - an exclusive lock (flock on DIR/run.lock, released when the process ends, even by kill -9), so
//   a second svqa on the same folder stops at once and says who holds it, instead of answering
//   every question a second time;
// - the resolved config, written only when the folder has none (or holds no answer yet). A folder
//   whose answers were made with another config is refused, naming the first key that differs:
//   resuming would label those answers with the new config.

#include <string>

#include "core/config/config_node.h"

namespace svqa {

class RunFolder {
 public:
  // Creates `dir` if needed, locks it, checks or writes DIR/config.yaml. `command` says what holds
  // the lock ("svqa run exp.yaml"). Throws std::runtime_error: one line naming the folder.
  RunFolder(const std::string& dir, const ConfigNode& resolved, const std::string& command);
  ~RunFolder();
  RunFolder(const RunFolder&) = delete;
  RunFolder& operator=(const RunFolder&) = delete;

 private:
  int lock_fd_ = -1;
};

}  // namespace svqa
