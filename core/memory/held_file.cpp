#include "core/memory/held_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/io/environment_error.h"

namespace svqa {

std::shared_ptr<const HeldFile> HeldFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw EnvironmentError(path + ": cannot open: " + std::strerror(errno));
  return std::shared_ptr<const HeldFile>(new HeldFile(path, fd));
}

HeldFile::~HeldFile() {
  if (fd_ >= 0) ::close(fd_);
}

int HeldFile::duplicate() const {
  const int fd = ::fcntl(fd_, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) throw EnvironmentError(path_ + ": cannot duplicate its descriptor: " + std::strerror(errno));
  return fd;
}

}  // namespace svqa
