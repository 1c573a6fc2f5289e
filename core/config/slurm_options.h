#pragma once
// An experiment's `slurm:` section: what `svqa submit` asks Slurm for (docs/experiments.md,
// "Running on a real cluster"). It says where a run goes, not what it computes: runs leave it out
// of their config (expand_grid, svqa run), so their folders (and resuming them) do not depend on it.
// svqa validate checks it; svqa submit reads it (slurm_options).
//
//   slurm: {partition: gpu, gpus: 1, cpus_per_task: 8, mem: 64G, time: "12:00:00",
//           max_running: 4, stream_shards: 4, sbatch: ["--account=proj"], setup: ["module load cuda"]}

#include <cstdint>
#include <string>
#include <vector>

#include "core/config/schema.h"

namespace svqa {

struct SlurmOptions {
  std::string partition;  // empty: the cluster's default
  int64_t gpus = 0;
  std::string gpu_type;
  int64_t cpus_per_task = 0;  // 0: the cluster's default
  std::string mem;
  std::string time;
  int64_t max_running = 0;  // the array's %k; 0: no limit
  int64_t stream_shards = 1;
  bool requeue = true;
  std::vector<std::string> sbatch;
  std::vector<std::string> setup;

  static void declare(Schema<SlurmOptions>& s) {
    s.field("partition", &SlurmOptions::partition, "sbatch --partition; empty: the cluster's default")
        .matches(R"([A-Za-z0-9_.,-]{0,128})", "partition names: letters, digits, _ . , -");
    s.field("gpus", &SlurmOptions::gpus, "GPUs per array task, asked as --gres=gpu:N (or gpu:TYPE:N); 0: none")
        .min(0)
        .max(64);
    s.field("gpu_type", &SlurmOptions::gpu_type, "the gres type of those GPUs (--gres=gpu:TYPE:N), e.g. a100; empty: any")
        .matches(R"([A-Za-z0-9_.-]{0,64})", "a gres type: letters, digits, _ . -");
    s.field("cpus_per_task", &SlurmOptions::cpus_per_task, "sbatch --cpus-per-task; 0: the cluster's default")
        .min(0)
        .max(4096);
    s.field("mem", &SlurmOptions::mem, "sbatch --mem per task, e.g. 64G; empty: the cluster's default")
        .matches(R"((\d{1,9}[KMGT]?)?)", "a size: digits, then K, M, G or T (e.g. 64G)");
    s.field("time", &SlurmOptions::time, "sbatch --time per task, e.g. 12:00:00 or 1-00:00:00; empty: the partition's")
        .matches(R"(((\d{1,3}-)?\d{1,4}(:\d{2}){0,2})?)", "[days-]hours[:minutes[:seconds]], e.g. 12:00:00");
    s.field("max_running", &SlurmOptions::max_running,
            "array tasks running at once (--array=0-N%k, e.g. the GPUs you may hold); 0: no limit")
        .min(0)
        .max(100000);
    s.field("stream_shards", &SlurmOptions::stream_shards,
            "stream shards per run: array tasks = runs x stream_shards, each answering its share of a run's "
            "streams (svqa run --shard i/N); the last to finish merges the run")
        .min(1)
        .max(10000);
    s.field("requeue", &SlurmOptions::requeue,
            "sbatch --requeue: a task preempted or on a failed node is requeued, and resumes from its records");
    s.field("sbatch", &SlurmOptions::sbatch,
            "more #SBATCH options for every job, one per item, e.g. [--account=proj, --qos=long]");
    s.field("setup", &SlurmOptions::setup,
            "shell lines run before svqa in each job, e.g. [module load cuda, export HF_HOME=/scratch/hf]");
    s.check("sbatch", [](const SlurmOptions& o) {
      for (const auto& line : o.sbatch)
        if (line.rfind("--", 0) != 0 || line.find_first_of("\n\r") != std::string::npos)
          return "'" + line + "': expected one sbatch option per item, starting with --";
      return std::string();
    });
    s.check("setup", [](const SlurmOptions& o) {
      for (const auto& line : o.setup)
        if (line.find_first_of("\n\r") != std::string::npos) return std::string("one shell line per item (no newline)");
      return std::string();
    });
  }
};

// The `slurm:` section of an experiment file's tree (defaults when absent); throws ConfigError.
SlurmOptions slurm_options(const ConfigNode& root);

}  // namespace svqa
