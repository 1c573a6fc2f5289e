#pragma once
// `svqa run|grid --devices LIST`: one child svqa per device, each a stream shard of every run (as
// `svqa submit`'s array tasks are), merged by the last shard to finish (app/cluster/device_children.h).

#include <string>
#include <vector>

#include "core/config/experiment.h"

namespace svqa {

struct DeviceRun {
  std::string command;               // "run" or "grid"
  std::vector<std::string> args;     // EXP.yaml, then --out / --set as given
  std::vector<ExperimentConfig> configs;  // every run's, validated: each runtime.device must fit the devices
};

// Checks the devices against the configs (one UsageError line), runs the children, relays their
// output to stdout; returns 0 when every shard succeeded, else prints which did not (stderr) and
// returns 1: a rerun of the same command resumes them.
int run_on_devices(const std::string& list, const DeviceRun& run);

}  // namespace svqa
