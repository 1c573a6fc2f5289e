#include "core/io/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace svqa {
namespace {

// The pid of a "<name>.tmp.<pid>" sibling of `name`, or 0 when `entry` is not one.
pid_t temporary_owner(const std::string& entry, const std::string& name) {
  const std::string prefix = name + ".tmp.";
  if (entry.size() <= prefix.size() || entry.size() > prefix.size() + 9 || entry.compare(0, prefix.size(), prefix))
    return 0;
  const std::string digits = entry.substr(prefix.size());
  if (digits.find_first_not_of("0123456789") != std::string::npos) return 0;
  return static_cast<pid_t>(std::stol(digits));
}

}  // namespace

void remove_stale_temporaries(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const std::string name = target.filename().string();
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const pid_t owner = temporary_owner(it->path().filename().string(), name);
    // Only a dead writer's file: a live one (this process included) may be about to rename it.
    if (owner > 0 && owner != ::getpid() && ::kill(owner, 0) != 0 && errno == ESRCH) fs::remove(it->path(), ec);
  }
}

void write_file_atomically(const std::string& path, const std::string& content) {
  namespace fs = std::filesystem;
  auto fail = [&](const std::string& what) {
    throw std::runtime_error(path + ": " + what + ": " + std::strerror(errno));
  };
  const fs::path target(path);
  if (target.has_parent_path()) fs::create_directories(target.parent_path());
  remove_stale_temporaries(path);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("cannot create " + tmp);
  for (size_t done = 0; done < content.size();) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) { ::close(fd); fail("write failed"); }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) { ::close(fd); fail("fsync failed"); }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail("rename failed");
}

}  // namespace svqa
