#include "app/cluster/device_children.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace svqa {
namespace {

constexpr size_t kMaxDevices = 1024;

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> items;
  for (size_t start = 0;;) {
    const size_t end = text.find(separator, start);
    items.push_back(text.substr(start, end - start));
    if (end == std::string::npos) return items;
    start = end + 1;
  }
}

bool all_digits(const std::string& text) {
  return !text.empty() && text.size() <= 3 && text.find_first_not_of("0123456789") == std::string::npos;
}

// The GPU a CUDA index names: the index-th of CUDA_VISIBLE_DEVICES when set, else the index itself.
std::string visible_gpu(const std::string& index, const std::string& item) {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (!visible || !*visible) return std::to_string(std::stoi(index));
  const auto gpus = split(visible, ',');
  const size_t i = std::stoul(index);
  if (i >= gpus.size())
    throw std::invalid_argument("--devices: '" + item + "': this process sees " + std::to_string(gpus.size()) +
                                " GPUs (CUDA_VISIBLE_DEVICES=" + visible + ")");
  return gpus[i];
}

struct Child {
  pid_t pid = -1;
  int fd = -1;          // read end of its stdout+stderr
  std::string pending;  // a line not yet ended
  std::string last;     // its last line, for the failure summary
  std::string tag;      // "[shard 1/2 cpu] "
};

// The environment of a child: this one's, with CUDA_VISIBLE_DEVICES set for a CUDA device.
std::vector<std::string> child_environment(const LocalDevice& device) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (device.visible_gpu.empty() || std::strncmp(*e, "CUDA_VISIBLE_DEVICES=", 21) != 0) env.emplace_back(*e);
  if (!device.visible_gpu.empty()) env.push_back("CUDA_VISIBLE_DEVICES=" + device.visible_gpu);
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Forks and execs one child whose stdout and stderr go to a new pipe; only async-signal-safe calls
// between fork and exec (everything is prepared before).
Child start_child(std::vector<std::string> argv, const LocalDevice& device) {
  std::vector<std::string> env = child_environment(device);
  std::vector<char*> args = pointers(argv), envp = pointers(env);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("--devices: pipe: ") + std::strerror(errno));
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("--devices: fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // a parent killed takes its children along
    if (::getppid() != parent) ::_exit(127);
    ::dup2(fds[1], STDOUT_FILENO);
    ::dup2(fds[1], STDERR_FILENO);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  Child child;
  child.pid = pid;
  child.fd = fds[0];
  return child;
}

// Relays what a child printed, whole lines only; returns false at its end of output.
bool relay(Child& child, std::ostream& out) {
  char buffer[65536];
  const ssize_t n = ::read(child.fd, buffer, sizeof buffer);
  if (n < 0 && errno == EINTR) return true;
  if (n > 0) child.pending.append(buffer, static_cast<size_t>(n));
  for (size_t end; (end = child.pending.find('\n')) != std::string::npos; child.pending.erase(0, end + 1)) {
    child.last = child.pending.substr(0, end);
    if (!child.last.empty()) out << child.tag << child.last << "\n";
  }
  if (n > 0) {
    out.flush();
    return true;
  }
  if (!child.pending.empty()) out << child.tag << (child.last = child.pending) << "\n" << std::flush;
  ::close(child.fd);
  child.fd = -1;
  return false;
}

// "" when the child exited 0, else what became of it.
std::string ending(const Child& child, int status) {
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  // A killed child said nothing of its end (its last line is progress, at best): the signal alone.
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "exit " + std::to_string(WEXITSTATUS(status)) + (child.last.empty() ? "" : ": " + child.last);
}

}  // namespace

std::vector<LocalDevice> parse_local_devices(const std::string& list) {
  std::vector<LocalDevice> devices;
  for (const auto& item : split(list, ',')) {
    LocalDevice d{item, "cpu", ""};
    const std::string index = item.rfind("cuda:", 0) == 0 ? item.substr(5) : item;
    if (all_digits(index)) {
      d.kind = "cuda";
      d.visible_gpu = visible_gpu(index, item);
    } else if (item != "cpu") {
      throw std::invalid_argument("--devices: '" + item + "': expected cpu, a CUDA index (0) or cuda:N, comma-separated");
    }
    if (!devices.empty() && devices.front().kind != d.kind)
      throw std::invalid_argument("--devices: '" + item + "' beside '" + devices.front().name +
                                  "': every device of one kind (the shards share one config)");
    devices.push_back(d);
  }
  if (devices.size() > kMaxDevices)
    throw std::invalid_argument("--devices: " + std::to_string(devices.size()) + " devices; at most " +
                                std::to_string(kMaxDevices));
  return devices;
}

std::vector<std::string> run_device_children(const std::vector<std::vector<std::string>>& argvs,
                                             const std::vector<LocalDevice>& devices, std::ostream& out) {
  const size_t n = devices.size();
  std::vector<Child> children;
  for (size_t i = 0; i < n; ++i) {
    children.push_back(start_child(argvs[i], devices[i]));
    children.back().tag = "[shard " + std::to_string(i) + "/" + std::to_string(n) + " " + devices[i].name + "] ";
  }
  for (size_t open = n; open > 0;) {
    std::vector<pollfd> fds;
    std::vector<Child*> polled;
    for (auto& c : children)
      if (c.fd >= 0) {
        fds.push_back({c.fd, POLLIN, 0});
        polled.push_back(&c);
      }
    if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR)
      throw std::runtime_error(std::string("--devices: poll: ") + std::strerror(errno));
    for (size_t k = 0; k < fds.size(); ++k)
      if (fds[k].revents && !relay(*polled[k], out)) --open;
  }
  std::vector<std::string> failures;
  for (size_t i = 0; i < n; ++i) {
    int status = 0;
    while (::waitpid(children[i].pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (const std::string why = ending(children[i], status); !why.empty())
      failures.push_back("shard " + std::to_string(i) + "/" + std::to_string(n) + " on " + devices[i].name + ": " + why);
  }
  return failures;
}

}  // namespace svqa
