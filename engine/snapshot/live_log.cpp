#include "engine/snapshot/live_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/io/checksum.h"
#include "engine/snapshot/snapshot_file.h"

namespace svqa {
namespace {

constexpr size_t kSumChars = 16;

EnvironmentError io_error(const std::string& path, const std::string& what, int why = errno) {
  return EnvironmentError(path + ": " + what + ": " + std::strerror(why));
}

}  // namespace

LiveLogWriter::LiveLogWriter(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
  if (fd_ < 0) throw io_error(path_, "cannot create memory snapshot log");
}

LiveLogWriter::~LiveLogWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void LiveLogWriter::append(const nlohmann::json& record) {
  const std::string text = record.dump();
  const std::string line = hex64(checksum64(text.data(), text.size())) + " " + text + "\n";
  const char* p = line.data();
  for (size_t left = line.size(); left > 0;) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw io_error(path_, "cannot write memory snapshot log");
    p += n, left -= static_cast<size_t>(n);
  }
  if (::fdatasync(fd_) != 0) throw io_error(path_, "cannot flush memory snapshot log");
}

LiveLogReader::LiveLogReader(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_RDONLY);
  if (fd_ < 0) throw SnapshotDamaged(path_ + ": cannot open: " + std::strerror(errno));
}

LiveLogReader::~LiveLogReader() {
  if (fd_ >= 0) ::close(fd_);
}

std::vector<nlohmann::json> LiveLogReader::read_new() {
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::pread(fd_, buffer, sizeof buffer, static_cast<off_t>(offset_));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw SnapshotDamaged(path_ + ": cannot read: " + std::strerror(errno));
    if (n == 0) break;
    partial_.append(buffer, static_cast<size_t>(n));
    offset_ += n;
  }
  std::vector<nlohmann::json> out;
  size_t start = 0;
  for (size_t end; (end = partial_.find('\n', start)) != std::string::npos; start = end + 1) {
    const std::string what = path_ + ": record " + std::to_string(++records_);
    if (end - start < kSumChars + 1 || partial_[start + kSumChars] != ' ')
      throw SnapshotDamaged(what + " is malformed");
    const char* text = partial_.data() + start + kSumChars + 1;
    const size_t size = end - start - kSumChars - 1;
    if (hex64(checksum64(text, size)) != partial_.substr(start, kSumChars))
      throw SnapshotDamaged(what + ": checksum differs");
    try {
      out.push_back(nlohmann::json::parse(text, text + size));
    } catch (const nlohmann::json::exception&) {
      throw SnapshotDamaged(what + " is not JSON");
    }
  }
  partial_.erase(0, start);
  return out;
}

}  // namespace svqa
