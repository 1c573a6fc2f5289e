#include "app/run/run_folder.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/config/config_diff.h"
#include "core/config/run_time_keys.h"
#include "core/io/atomic_file.h"
#include "core/io/safe_paths.h"
#include "engine/snapshot/model_identity.h"

namespace svqa {
namespace {

namespace fs = std::filesystem;

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string this_host() {
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  return host;
}

// Who holds the lock, as the lock file says: "pid 123 on host since 2025-01-01 10:00:00 (svqa run x.yaml)".
std::string holder_line(const std::string& command) {
  const std::time_t now = std::time(nullptr);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", std::localtime(&now));
  return "pid " + std::to_string(getpid()) + " on " + this_host() + " since " + when + " (" + command + ")";
}

// A line left by an earlier holder on this host that has since ended (or was killed): the live
// holder has not written its own yet.
bool names_a_dead_local_process(const std::string& line) {
  int pid = 0;
  char on[256] = "";
  if (std::sscanf(line.c_str(), "pid %d on %255s", &pid, on) != 2 || pid <= 0) return false;
  return this_host() == on && ::kill(pid, 0) != 0 && errno == ESRCH;
}

bool has_answers(const std::string& predictions) {
  std::error_code ec;
  return fs::exists(predictions, ec) && fs::file_size(predictions, ec) > 0;
}

// Answers anywhere in the folder: the run's records, or any stream shard's (DIR/shards/*.jsonl,
// app/run/shard/): a shard starting later must not relabel its siblings' answers.
bool folder_has_answers(const std::string& dir) {
  if (has_answers(dir + "/predictions.jsonl")) return true;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir + "/shards", ec))
    if (entry.path().extension() == ".jsonl" && has_answers(entry.path().string())) return true;
  return false;
}

// DIR/config.yaml: written when new (or no answer yet), else a config that differs from it at most in
// run-time-only keys (core/config/run_time_keys.h; then it records this session's values) or a refusal.
void check_config(const std::string& dir, const ConfigNode& resolved, bool answered) {
  const std::string config = dir + "/config.yaml";
  const std::string now = to_yaml(resolved);
  if (fs::exists(config)) {
    if (read_all(config) == now) return;
    const ConfigNode was = parse_yaml_file(config);
    if (!first_config_difference(was, resolved)) return;  // the same tree, written otherwise (another svqa version)
    const auto difference = first_binding_difference(was, resolved);
    if (difference && answered)
      throw std::runtime_error(config + ": its answers were made with another config (" + *difference +
                               "); rerun with that config to resume, or use another --out or name");
  } else if (answered) {
    throw std::runtime_error(dir + ": holds predictions.jsonl but no config.yaml, so which config made them is "
                             "unknown; use another --out or name");
  }
  write_file_atomically(config, now);
}

// DIR/models.json: the identity of every export the config names, checked as the config is. A
// folder answered by an svqa that did not record them gets them now.
void check_models(const std::string& dir, const ConfigNode& resolved, bool answered) {
  const std::string file = dir + "/models.json";
  const nlohmann::json now = model_identities(resolved);
  if (answered && fs::exists(file)) {
    nlohmann::json recorded;
    try {
      recorded = nlohmann::json::parse(read_all(file));
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(file + ": not valid JSON (" + std::string(e.what()) + "); move it away to resume");
    }
    if (recorded == now) return;
    if (const auto difference = first_model_difference(recorded, now))
      throw std::runtime_error(file + ": its answers were made with another model at " + *difference +
                               "; rerun with that model to resume, or use another --out or name");
    return;
  }
  write_file_atomically(file, now.dump(2) + "\n");
}

}  // namespace

std::string spill_subfolder(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) throw std::runtime_error(dir + ": cannot stat: " + std::strerror(errno));
  return safe_path_component(this_host() + "-" + std::to_string(st.st_dev) + "-" + std::to_string(st.st_ino));
}

RunFolder::RunFolder(const std::string& dir, const ConfigNode& resolved, const std::string& command,
                     const FolderPart& part) {
  const std::string lock = dir + "/" + part.lock;
  fs::create_directories(fs::path(lock).parent_path());
  lock_fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) throw std::runtime_error(lock + ": cannot open: " + std::strerror(errno));
  // The holder writes its line just after it takes the lock, so a second svqa can find the file
  // still empty (or naming an earlier holder, now dead) for a moment: it looks again until the line
  // is the live holder's or the lock is free, for at most two seconds (then: "holder unknown").
  for (int attempt = 0;; ++attempt) {
    if (::flock(lock_fd_, LOCK_EX | LOCK_NB) == 0) break;
    const int why = errno;
    if (why != EWOULDBLOCK) {
      ::close(lock_fd_);
      throw std::runtime_error(lock + ": cannot lock: " + std::strerror(why));
    }
    std::string holder = read_all(lock);
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    const bool known = !holder.empty() && !names_a_dead_local_process(holder);
    if (known || attempt == 400) {
      ::close(lock_fd_);
      lock_fd_ = -1;
      throw std::runtime_error(dir + ": in use by another svqa (" + (known ? holder : "holder unknown") +
                               "); wait for it to finish or use another --out");
    }
    ::usleep(5000);
  }
  try {  // a refused config must not keep the folder locked (a grid goes on in the same process)
    const std::string who = holder_line(command) + "\n";
    if (::ftruncate(lock_fd_, 0) != 0 ||
        ::pwrite(lock_fd_, who.data(), who.size(), 0) != static_cast<ssize_t>(who.size()))
      throw std::runtime_error(lock + ": cannot write: " + std::strerror(errno));

    // What an earlier svqa killed mid-write left: its files are rewritten whole, the temporaries never read.
    for (const char* name : {"config.yaml", "models.json", "metrics.json", "scores.json"})
      remove_stale_temporaries(dir + "/" + name);
    const bool answered = folder_has_answers(dir);
    check_config(dir, resolved, answered);
    check_models(dir, resolved, answered);
  } catch (...) {
    ::close(lock_fd_);
    throw;
  }
}

RunFolder::~RunFolder() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the flock; the line stays, naming the last holder
}

}  // namespace svqa
