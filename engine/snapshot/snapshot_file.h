#pragma once
// The bytes of a memory snapshot (docs/architecture.md, "Memory snapshots"): one data file of raw
// tensors, each named in the snapshot's index by a TensorRef (offset, dtype, checksum64, shape).
// A block's K/V lie back to back from a 64-byte aligned base, per layer K then V: the spill
// layout, so the memory bank maps them where they lie (MappedKv) instead of reading them.

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/io/environment_error.h"
#include "core/memory/held_file.h"

namespace svqa {

// A snapshot that cannot be used as it is (cut short, a checksum that differs, a malformed index,
// a log that does not fit the run): never answered from; the runner drops it and encodes.
class SnapshotDamaged : public EnvironmentError {
 public:
  using EnvironmentError::EnvironmentError;
};

struct TensorRef {
  int64_t offset = 0;
  at::ScalarType dtype = at::kFloat;
  uint64_t sum = 0;
  std::vector<int64_t> shape;
  int64_t bytes() const;
};

nlohmann::json ref_json(const TensorRef& r);
// Throws SnapshotDamaged naming `what` on a malformed entry.
TensorRef ref_from_json(const nlohmann::json& j, const std::string& what);

// Appends tensors to a new data file. Throws EnvironmentError naming the file on a failed write.
class SnapshotDataWriter {
 public:
  explicit SnapshotDataWriter(std::string path);
  ~SnapshotDataWriter();
  SnapshotDataWriter(const SnapshotDataWriter&) = delete;
  SnapshotDataWriter& operator=(const SnapshotDataWriter&) = delete;

  // Writes `t` (any device; copied to the CPU, contiguous) at the end of the file.
  TensorRef write(const at::Tensor& t);
  // Pads the file to a multiple of `bytes`.
  void align(int64_t bytes);
  int64_t size() const { return size_; }
  // Flushes what was written to disk (before a log record naming it is appended).
  void sync();
  // Flushes the file to disk and closes it.
  void finish();

 private:
  void put(const void* data, int64_t n);
  std::string path_;
  int fd_ = -1;
  int64_t size_ = 0;
};

// Reads a snapshot's small tensors (positions, representatives, sinks) whole, checking each one's
// checksum. Throws SnapshotDamaged naming the file on a short read or a checksum that differs.
// `growing`: the file is still being appended to (a snapshot being written): its size is taken
// again when a tensor lies past it. The file is held open (held()): the blocks mapped from it
// keep reading it through that descriptor, whatever happens to its name.
class SnapshotDataReader {
 public:
  // Opens `path`; SnapshotDamaged naming it when it cannot (removed meanwhile: a miss).
  explicit SnapshotDataReader(std::string path, bool growing = false);
  // Reads a file opened already (MemoryCache::find opens the data file of the entry it checks).
  explicit SnapshotDataReader(std::shared_ptr<const HeldFile> file, bool growing = false);
  at::Tensor read(const TensorRef& r) const;
  // The file's size, at least `end` if it has grown that far (taken again for a growing file).
  int64_t file_bytes(int64_t end = 0) const;
  bool growing() const { return growing_; }
  const std::string& path() const { return file_->path(); }
  const std::shared_ptr<const HeldFile>& held() const { return file_; }

 private:
  std::shared_ptr<const HeldFile> file_;
  bool growing_ = false;
  mutable int64_t file_bytes_ = 0;
};

}  // namespace svqa
