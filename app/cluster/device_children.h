#pragma once
// Every device of one machine without a scheduler (`svqa run|grid --devices 0,1,...`): one child svqa
// per device, each answering one stream shard (`--shard i/N`) as an array task of `svqa submit` does,
// into the same shard files and locks; the last shard to finish merges. A CUDA child sees its GPU
// alone (CUDA_VISIBLE_DEVICES, as Slurm gives a task its GPU), so its `runtime.device: cuda` is that
// GPU; a `cpu` child runs on the CPU. The children's output is relayed line by line, each line
// prefixed with its shard and device.

#include <ostream>
#include <string>
#include <vector>

namespace svqa {

struct LocalDevice {
  std::string name;          // as `--devices` gave it ("cpu", "1", "cuda:1")
  std::string kind;          // "cpu" or "cuda": the runtime.device every child's config must hold
  std::string visible_gpu;   // CUDA: the child's CUDA_VISIBLE_DEVICES (the parent's i-th visible GPU)
};

// "0,1" / "cuda:0,cuda:1" / "cpu,cpu" → one device per item, all of one kind. A CUDA index counts
// among the GPUs this process sees (its CUDA_VISIBLE_DEVICES when set). Throws std::invalid_argument,
// one line naming the item, for anything else.
std::vector<LocalDevice> parse_local_devices(const std::string& list);

// Runs one child per device: `argvs[i]` (argv[0] the program's path) with device i's environment,
// relays what each prints (stdout and stderr) to `out` as "[shard i/N DEVICE] line", and waits for
// all. Returns one line per child that did not exit 0 ("shard 1/2 on cpu: killed by signal 9"; empty
// when all succeeded). A child outlives no parent: it is sent SIGTERM when this process ends.
std::vector<std::string> run_device_children(const std::vector<std::vector<std::string>>& argvs,
                                             const std::vector<LocalDevice>& devices, std::ostream& out);

}  // namespace svqa
