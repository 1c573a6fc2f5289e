#pragma once
// A file opened read-only and kept open while anything holds it. The blocks a memory bank maps
// from a memory snapshot (MappedKv) read through it, so the snapshot removed from its folder
// meanwhile (`svqa cache gc|rm`, another run's `memory.max_gb`) stays readable, unchanged, for
// the stream that replays it; its space is freed once the last holder lets go.

#include <cstdint>
#include <memory>
#include <string>

namespace svqa {

class HeldFile {
 public:
  // Throws EnvironmentError naming `path` when it cannot be opened.
  static std::shared_ptr<const HeldFile> open(const std::string& path);
  ~HeldFile();
  HeldFile(const HeldFile&) = delete;
  HeldFile& operator=(const HeldFile&) = delete;

  // A descriptor of its own (the caller closes it), reading the file held.
  int duplicate() const;
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }  // the name it was opened by (for messages)

 private:
  HeldFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_ = -1;
};

}  // namespace svqa
