#include "app/cli/run_on_devices.h"

#include <filesystem>
#include <iostream>
#include <stdexcept>

#include "app/cli/cli_commands.h"
#include "app/cluster/device_children.h"
#include "core/config/runtime.h"

namespace svqa {
namespace {

std::vector<LocalDevice> devices_option(const std::string& list) {
  try {
    return parse_local_devices(list);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

// Each child runs the run's own config on its device: runtime.device must say the devices' kind
// (a CUDA child sees its GPU alone, so `cuda`, as under Slurm).
void check_runtime_devices(const std::string& list, const std::string& kind, const std::vector<ExperimentConfig>& configs) {
  if (kind == "cuda") require_device_support("cuda", "--devices " + list);
  for (const auto& cfg : configs)
    if (cfg.header.runtime.device != kind)
      throw UsageError("--devices " + list + ": runtime.device of " + cfg.header.name + " is " +
                       cfg.header.runtime.device + "; it must be " + kind +
                       (kind == "cuda" ? " (each child sees only its own GPU, as a Slurm task does)" : "") +
                       ": --set runtime.device=" + kind);
}

// The child's arguments: svqa COMMAND EXP [--out ...] [--set ...] and its shard.
std::vector<std::string> child_args(const DeviceRun& run, size_t index, size_t count) {
  std::vector<std::string> argv = {std::filesystem::read_symlink("/proc/self/exe").string(), run.command};
  argv.insert(argv.end(), run.args.begin(), run.args.end());
  if (run.command == "grid") argv.insert(argv.end(), {"--stream-shards", std::to_string(count)});
  argv.insert(argv.end(), {"--shard", std::to_string(index) + "/" + std::to_string(count)});
  return argv;
}

}  // namespace

int run_on_devices(const std::string& list, const DeviceRun& run) {
  const std::vector<LocalDevice> devices = devices_option(list);
  check_runtime_devices(list, devices.front().kind, run.configs);
  std::vector<std::vector<std::string>> argvs;
  for (size_t i = 0; i < devices.size(); ++i) argvs.push_back(child_args(run, i, devices.size()));
  std::cout << "svqa " << run.command << ": " << devices.size() << " stream shards, one per device (" << list
            << "); each line below starts with its shard\n"
            << std::flush;
  const std::vector<std::string> failed = run_device_children(argvs, devices, std::cout);
  if (failed.empty()) return 0;
  std::cerr << "svqa " << run.command << ": " << failed.size() << " of " << devices.size()
            << " stream shards failed (rerun the same command: each resumes from its records):\n";
  for (const auto& f : failed) std::cerr << "  " << f << "\n";
  return 1;
}

}  // namespace svqa
