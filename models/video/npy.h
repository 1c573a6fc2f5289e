#pragma once
// NumPy .npy files (format versions 1–3) for the arrays svqa exchanges with Python: uint8,
// float32 and int64, C order, little-endian.

#include <ATen/ATen.h>

#include <cstdio>
#include <string>
#include <vector>

namespace svqa {

// Reads the whole array into a CPU tensor. Throws std::runtime_error naming `path` and what was
// expected (magic, header field, dtype, data size).
at::Tensor read_npy(const std::string& path);

// Writes `array` (any device and layout; uint8, float32 or int64) as a version 1.0 .npy file,
// atomically. Throws std::runtime_error naming `path`.
void write_npy(const std::string& path, const at::Tensor& array);

// An array written as it is made, rows at a time: the header first (with room for any row count),
// the rows appended, the count patched in by finish(), which then renames the file over `path`
// (as write_npy, nothing half-written is ever at `path`). Memory: one append's rows.
class NpyWriter {
 public:
  explicit NpyWriter(std::string path);  // throws when the file cannot be created
  ~NpyWriter();                          // not finished: the temporary file is removed
  NpyWriter(const NpyWriter&) = delete;
  NpyWriter& operator=(const NpyWriter&) = delete;
  // `rows` [n, ...]: every append the dtype and row shape of the first.
  void append(const at::Tensor& rows);
  void finish();
  int64_t rows() const { return rows_; }

 private:
  std::vector<int64_t> shape(int64_t rows) const;
  void write(const std::string& bytes);
  void write(const void* data, size_t size);
  void start_writeback();

  std::string path_, temporary_;
  std::FILE* file_ = nullptr;
  at::ScalarType dtype_ = at::kByte;
  std::vector<int64_t> row_shape_;
  int64_t rows_ = 0;
  int64_t written_back_ = 0;  // bytes the kernel was asked to write back (start_writeback)
  int64_t dropped_ = 0;       // bytes written and dropped from the page cache
};

}  // namespace svqa
