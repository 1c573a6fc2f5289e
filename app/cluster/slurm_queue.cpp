#include "app/cluster/slurm_queue.h"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "app/cluster/slurm_script.h"

namespace svqa {
namespace {

std::string joined(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

// "JOBID|STATE" lines into the map (the first word of the state: "CANCELLED by 0" → CANCELLED).
void read_states(const std::string& text, std::map<std::string, std::string>& states) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const size_t bar = line.find('|');
    if (bar == std::string::npos) continue;
    std::string state = line.substr(bar + 1);
    state = state.substr(0, state.find_first_of(" |"));
    states.emplace(line.substr(0, bar), state);  // squeue's first: it is the live one
  }
}

}  // namespace

std::string run_command(const std::vector<std::string>& argv) {
  std::string command;
  for (const auto& arg : argv) command += (command.empty() ? "" : " ") + shell_quote(arg);
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) throw std::runtime_error(argv.front() + ": cannot run");
  std::string out;
  std::array<char, 4096> buffer{};
  for (size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0;) out.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  if (status != 0) {  // its last line says why ("squeue: fatal: Could not establish a configuration source")
    while (!out.empty() && out.back() == '\n') out.pop_back();
    out = out.substr(out.find_last_of('\n') + 1);
    throw std::runtime_error(command + " failed" + (WIFEXITED(status) ? " (exit " + std::to_string(WEXITSTATUS(status)) + ")" : "") +
                             (out.empty() ? "" : ": " + out));
  }
  return out;
}

std::string submit_script(const std::string& script, const std::string& after_any) {
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  if (!after_any.empty()) argv.push_back("--dependency=afterany:" + after_any);
  argv.push_back(script);
  std::string id = run_command(argv);
  id = id.substr(0, id.find_first_of(";\n"));  // "123;cluster" on a multi-cluster setup
  if (id.empty()) throw std::runtime_error("sbatch " + script + ": printed no job id");
  return id;
}

std::map<std::string, std::string> job_states(const std::vector<std::string>& jobs) {
  std::map<std::string, std::string> states;
  try {
    read_states(run_command({"squeue", "-h", "-r", "-t", "all", "-j", joined(jobs, ","), "-o", "%i|%T"}), states);
  } catch (const std::runtime_error& e) {  // every job ended long ago: squeue knows none of them
    if (std::string(e.what()).find("Invalid job id") == std::string::npos) throw;
  }
  try {
    read_states(run_command({"sacct", "-n", "-P", "-X", "-j", joined(jobs, ","), "-o", "JobID,State"}), states);
  } catch (const std::runtime_error&) {  // accounting off ("Slurm accounting storage is disabled"): squeue only
  }
  return states;
}

}  // namespace svqa
