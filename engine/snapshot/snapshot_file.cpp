#include "engine/snapshot/snapshot_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/io/checksum.h"

namespace svqa {
namespace {

EnvironmentError io_error(const std::string& path, const std::string& what, int why = errno) {
  return EnvironmentError(path + ": " + what + ": " + std::strerror(why));
}

}  // namespace

int64_t TensorRef::bytes() const {
  int64_t n = static_cast<int64_t>(c10::elementSize(dtype));
  for (const int64_t s : shape) n *= s;
  return n;
}

nlohmann::json ref_json(const TensorRef& r) {
  return nlohmann::json::array({r.offset, static_cast<int>(r.dtype), r.sum, r.shape});
}

TensorRef ref_from_json(const nlohmann::json& j, const std::string& what) {
  if (!j.is_array() || j.size() != 4 || !j[0].is_number_integer() || !j[1].is_number_integer() ||
      !j[2].is_number_unsigned() || !j[3].is_array())
    throw SnapshotDamaged(what + ": malformed tensor entry");
  TensorRef r;
  r.offset = j[0].get<int64_t>();
  const int dtype = j[1].get<int>();
  if (dtype < 0 || dtype >= static_cast<int>(at::ScalarType::NumOptions)) throw SnapshotDamaged(what + ": unknown dtype");
  r.dtype = static_cast<at::ScalarType>(dtype);
  r.sum = j[2].get<uint64_t>();
  for (const auto& s : j[3]) {
    if (!s.is_number_integer() || s.get<int64_t>() < 0) throw SnapshotDamaged(what + ": malformed shape");
    r.shape.push_back(s.get<int64_t>());
  }
  if (r.offset < 0) throw SnapshotDamaged(what + ": negative offset");
  return r;
}

SnapshotDataWriter::SnapshotDataWriter(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd_ < 0) throw io_error(path_, "cannot create memory snapshot");
}

SnapshotDataWriter::~SnapshotDataWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void SnapshotDataWriter::put(const void* data, int64_t n) {
  const char* p = static_cast<const char*>(data);
  for (int64_t left = n; left > 0;) {
    const ssize_t w = ::write(fd_, p, static_cast<size_t>(left));
    if (w < 0) {
      if (errno == EINTR) continue;
      throw io_error(path_, "cannot write memory snapshot");
    }
    p += w, left -= w;
  }
  size_ += n;
}

TensorRef SnapshotDataWriter::write(const at::Tensor& t) {
  const at::Tensor c = t.to(at::kCPU).contiguous();
  TensorRef r;
  r.offset = size_;
  r.dtype = c.scalar_type();
  r.shape = c.sizes().vec();
  const int64_t n = r.bytes();
  r.sum = checksum64(c.data_ptr(), static_cast<size_t>(n));
  put(c.data_ptr(), n);
  return r;
}

void SnapshotDataWriter::align(int64_t bytes) {
  static const char zeros[64] = {};
  for (int64_t pad = (bytes - size_ % bytes) % bytes; pad > 0;) {
    const int64_t n = std::min<int64_t>(pad, sizeof zeros);
    put(zeros, n);
    pad -= n;
  }
}

void SnapshotDataWriter::sync() {
  if (::fdatasync(fd_) != 0) throw io_error(path_, "cannot flush memory snapshot");
}

void SnapshotDataWriter::finish() {
  if (::fsync(fd_) != 0) throw io_error(path_, "cannot flush memory snapshot");
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) throw io_error(path_, "cannot close memory snapshot");
}

namespace {

std::shared_ptr<const HeldFile> open_snapshot_data(const std::string& path) {
  try {
    return HeldFile::open(path);
  } catch (const EnvironmentError& e) {
    throw SnapshotDamaged(e.what());
  }
}

}  // namespace

SnapshotDataReader::SnapshotDataReader(std::string path, bool growing)
    : SnapshotDataReader(open_snapshot_data(path), growing) {}

SnapshotDataReader::SnapshotDataReader(std::shared_ptr<const HeldFile> file, bool growing)
    : file_(std::move(file)), growing_(growing) {
  struct stat st {};
  if (::fstat(file_->fd(), &st) != 0) throw SnapshotDamaged(path() + ": cannot stat: " + std::strerror(errno));
  file_bytes_ = st.st_size;
}

int64_t SnapshotDataReader::file_bytes(int64_t end) const {
  struct stat st {};
  if (growing_ && end > file_bytes_ && ::fstat(file_->fd(), &st) == 0) file_bytes_ = st.st_size;
  return file_bytes_;
}

at::Tensor SnapshotDataReader::read(const TensorRef& r) const {
  if (r.offset + r.bytes() > file_bytes(r.offset + r.bytes()))
    throw SnapshotDamaged(path() + ": ends before byte " + std::to_string(r.offset + r.bytes()));
  at::Tensor t = at::empty(r.shape, at::TensorOptions().dtype(r.dtype));
  char* p = static_cast<char*>(t.data_ptr());
  int64_t offset = r.offset;
  for (int64_t left = r.bytes(); left > 0;) {
    const ssize_t n = ::pread(file_->fd(), p, static_cast<size_t>(left), static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw SnapshotDamaged(path() + ": cannot read byte " + std::to_string(offset));
    p += n, offset += n, left -= n;
  }
  if (checksum64(t.data_ptr(), static_cast<size_t>(r.bytes())) != r.sum)
    throw SnapshotDamaged(path() + ": checksum differs at byte " + std::to_string(r.offset));
  return t;
}

}  // namespace svqa
