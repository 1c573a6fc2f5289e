#include "core/memory/spill_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/memory/memory_bank.h"

namespace svqa {
namespace {

// A spill file whose bytes are not the ones written (overwritten, truncated, another run's block):
// the question must not be answered from it.
EnvironmentError changed_error(const std::string& path, const std::string& why) {
  return EnvironmentError(path + ": spill file changed since it was written (" + why +
                          "); not answered from it: rerun to retry the question");
}

}  // namespace

int64_t tensor_bytes(const at::Tensor& t) { return t.defined() ? t.numel() * static_cast<int64_t>(t.element_size()) : 0; }

int64_t tensor_bytes_of(const std::vector<int64_t>& shape, at::ScalarType dtype) {
  if (shape.empty()) return 0;
  int64_t n = static_cast<int64_t>(c10::elementSize(dtype));
  for (const int64_t s : shape) n *= s;
  return n;
}

EnvironmentError io_error(const std::string& path, const std::string& what, int why) {
  return EnvironmentError(path + ": " + what + ": " + std::strerror(why));
}

void throw_changed(const std::string& path, bool external, const std::string& why) {
  if (external)
    throw MappedFileChanged(path, path + ": memory snapshot changed since it was written (" + why + ")");
  throw changed_error(path, why);
}

int open_spilled(const std::string& path, const HeldFile* held, int64_t bytes, bool external, bool at_least) {
  const int fd = held ? held->duplicate() : ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw io_error(path, "cannot open spill file", errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int why = errno;
    ::close(fd);
    throw io_error(path, "cannot stat spill file", why);
  }
  if (at_least ? st.st_size < bytes : st.st_size != bytes) {
    ::close(fd);
    throw_changed(path, external, std::to_string(st.st_size) + " bytes, " + std::to_string(bytes) + " written");
  }
  return fd;
}

void write_tensor(int fd, const at::Tensor& t, const std::string& path) {
  const char* p = static_cast<const char*>(t.data_ptr());
  for (int64_t left = tensor_bytes(t); left > 0;) {
    const ssize_t n = ::write(fd, p, static_cast<size_t>(left));
    if (n < 0) {
      const int why = errno;
      ::close(fd);
      throw io_error(path, "cannot write spill file", why);
    }
    p += n;
    left -= n;
  }
}

void read_tensor(int fd, const at::Tensor& dst, int64_t offset, const std::string& path, bool external) {
  char* p = static_cast<char*>(dst.data_ptr());
  for (int64_t left = tensor_bytes(dst); left > 0;) {
    const ssize_t n = ::pread(fd, p, static_cast<size_t>(left), static_cast<off_t>(offset));
    if (n < 0) {
      const int why = errno;
      ::close(fd);
      throw io_error(path, "cannot read spill file", why);
    }
    if (n == 0) {  // cut short after the size check: no errno to report
      ::close(fd);
      throw_changed(path, external, "ends before byte " + std::to_string(offset));
    }
    p += n, offset += n, left -= n;
  }
}

FileMapping::~FileMapping() {
  if (start) munmap(start, size);
}

std::shared_ptr<FileMapping> map_spilled(int fd, int64_t base, int64_t bytes, const std::string& path) {
  auto mapping = std::make_shared<FileMapping>();
  // mmap offsets are whole pages: map from the page holding the block's first byte.
  const int64_t page = sysconf(_SC_PAGESIZE), start = base - base % page;
  mapping->size = static_cast<size_t>(bytes + (base - start));
  if (bytes > 0) {
    void* data = mmap(nullptr, mapping->size, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(start));
    const int why = errno;
    ::close(fd);
    if (data == MAP_FAILED) throw io_error(path, "cannot map spill file", why);
    mapping->start = data;
  } else {
    ::close(fd);
  }
  mapping->data = static_cast<char*>(mapping->start) + (base - start);
  return mapping;
}

}  // namespace svqa
