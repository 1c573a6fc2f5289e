#include "core/io/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace svqa {

void write_file_atomically(const std::string& path, const std::string& content) {
  namespace fs = std::filesystem;
  auto fail = [&](const std::string& what) {
    throw std::runtime_error(path + ": " + what + ": " + std::strerror(errno));
  };
  const fs::path target(path);
  if (target.has_parent_path()) fs::create_directories(target.parent_path());
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
