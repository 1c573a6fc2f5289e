#pragma once
// NumPy .npy files (format versions 1–3) for the arrays svqa exchanges with Python: uint8,
// float32 and int64, C order, little-endian.

#include <ATen/ATen.h>

#include <string>

namespace svqa {

// Reads the whole array into a CPU tensor. Throws std::runtime_error naming `path` and what was
// expected (magic, header field, dtype, data size).
at::Tensor read_npy(const std::string& path);

// Writes `array` (any device and layout; uint8, float32 or int64) as a version 1.0 .npy file,
// atomically. Throws std::runtime_error naming `path`.
void write_npy(const std::string& path, const at::Tensor& array);

}  // namespace svqa
