#pragma once
// The file I/O under the memory bank's disk tier: a block's K/V written whole to its spill file, and
// read or mapped back (checked against the size written). A file that cannot be written or read is
// the machine's failure (EnvironmentError); one whose bytes changed is reported by throw_changed.

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/io/environment_error.h"
#include "core/memory/held_file.h"

namespace svqa {

int64_t tensor_bytes(const at::Tensor& t);  // 0 when undefined
int64_t tensor_bytes_of(const std::vector<int64_t>& shape, at::ScalarType dtype);  // 0 for an empty shape

// `path: what: strerror(why)`.
EnvironmentError io_error(const std::string& path, const std::string& what, int why);

// A file whose bytes are not those written: the bank's own spill file (EnvironmentError), or for
// an `external` one (a memory snapshot) MappedFileChanged, so its owner can drop it.
[[noreturn]] void throw_changed(const std::string& path, bool external, const std::string& why);

// Opens a spilled block's file for reading (through `held` when the bank holds it open) and checks
// that it has the size written (at least `bytes` when `at_least`: a file still being appended to).
int open_spilled(const std::string& path, const HeldFile* held, int64_t bytes, bool external, bool at_least = false);

// Writes `t`'s bytes at the file's current end.
void write_tensor(int fd, const at::Tensor& t, const std::string& path);

// Reads `dst`'s bytes from `offset`; the file ending first is a change (it passed the size check).
void read_tensor(int fd, const at::Tensor& dst, int64_t offset, const std::string& path, bool external);

// A read-only mapping of a spilled block's bytes [base, base + bytes), unmapped when the last
// tensor viewing it goes (hold the shared_ptr in their deleters). `data` points at byte `base`.
// map_spilled closes `fd`.
struct FileMapping {
  void* start = nullptr;
  size_t size = 0;
  char* data = nullptr;
  ~FileMapping();
};
std::shared_ptr<FileMapping> map_spilled(int fd, int64_t base, int64_t bytes, const std::string& path);

}  // namespace svqa
