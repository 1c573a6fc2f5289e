#include "core/cluster/slurm_script.h"

namespace svqa {

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

namespace {

std::string gres(const SlurmOptions& o) {
  return "gpu:" + (o.gpu_type.empty() ? "" : o.gpu_type + ":") + std::to_string(o.gpus);
}

// "#SBATCH --key=value" lines for what `options` sets (an empty value: the cluster's default).
std::string resource_lines(const SlurmOptions& o, const SlurmJob& job) {
  std::string out;
  auto line = [&out](const std::string& option) { out += "#SBATCH " + option + "\n"; };
  line("--job-name=" + job.name);
  line("--output=" + job.output);
  if (job.array_tasks > 0)
    line("--array=0-" + std::to_string(job.array_tasks - 1) +
         (o.max_running > 0 ? "%" + std::to_string(o.max_running) : ""));
  if (!o.partition.empty()) line("--partition=" + o.partition);
  if (job.gpus && o.gpus > 0) line("--gres=" + gres(o));
  if (o.cpus_per_task > 0) line("--cpus-per-task=" + std::to_string(o.cpus_per_task));
  if (!o.mem.empty()) line("--mem=" + o.mem);
  if (!o.time.empty()) line("--time=" + o.time);
  line(o.requeue ? "--requeue" : "--no-requeue");
  for (const auto& extra : o.sbatch) line(extra);
  return out;
}

}  // namespace

std::string sbatch_script(const SlurmOptions& options, const SlurmJob& job) {
  std::string out = "#!/bin/bash\n# Written by svqa submit.\n" + resource_lines(options, job);
  out += "set -euo pipefail\ncd " + shell_quote(job.workdir) + "\n";
  for (const auto& line : options.setup) out += line + "\n";
  for (const auto& line : job.body) out += line + "\n";
  return out;
}

}  // namespace svqa
