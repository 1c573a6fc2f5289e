#include "app/cluster/slurm_script.h"

#include <stdexcept>

namespace svqa {

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string sbatch_value(const std::string& text) {
  if (text.find_first_of("\n\r") != std::string::npos)
    throw std::invalid_argument("'" + text + "': a newline cannot be written in an #SBATCH line");
  if (!text.empty() && text.find_first_not_of(kPlainSbatchCharacters) == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) out += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

std::string slurm_filename_folder(const std::string& folder) {
  if (folder.find('\\') != std::string::npos)
    throw std::invalid_argument(folder + ": a backslash in a Slurm log path turns off its %A/%a/%j patterns; use "
                                "an --out without one");
  std::string out;
  for (const char c : folder) out += c == '%' ? std::string("%%") : std::string(1, c);
  return out;
}

namespace {

std::string gres(const SlurmOptions& o) {
  return "gpu:" + (o.gpu_type.empty() ? "" : o.gpu_type + ":") + std::to_string(o.gpus);
}

// "#SBATCH --key=value" lines for what `options` sets (an empty value: the cluster's default).
std::string resource_lines(const SlurmOptions& o, const SlurmJob& job) {
  std::string out;
  auto line = [&out](const std::string& option) { out += "#SBATCH " + option + "\n"; };
  line("--job-name=" + sbatch_value(job.name));
  line("--output=" + sbatch_value(job.output));
  if (!job.error.empty()) line("--error=" + sbatch_value(job.error));
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
