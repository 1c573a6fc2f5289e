// .npy files: what write_npy writes, read_npy reads back unchanged, for every supported dtype and
// rank; unsupported dtypes and missing files are clear errors.

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "models/video/npy.h"

namespace svqa {
namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("svqa_test_npy_" + name)).string();
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("npy round trip keeps dtype, shape and values", "[npy]") {
  const std::vector<std::vector<int64_t>> shapes = {{2, 3}, {5}, {}, {0, 4}, {2, 3, 4, 3}};
  for (const auto type : {at::kByte, at::kFloat, at::kLong}) {
    for (const auto& shape : shapes) {
      const at::Tensor original = at::randint(0, 250, shape, at::TensorOptions().dtype(at::kLong)).to(type);
      const std::string path = temp_path("round_trip.npy");
      write_npy(path, original.dim() >= 2 ? original.transpose(0, 1).contiguous().transpose(0, 1) : original);
      const at::Tensor back = read_npy(path);
      INFO("dtype " << type << " shape " << original.sizes());
      CHECK(back.scalar_type() == type);
      CHECK(back.sizes() == original.sizes());
      CHECK(at::equal(back, original));
      // numpy's layout: the data starts on a 64-byte boundary after a '\n'-terminated header.
      CHECK(std::filesystem::file_size(path) % 64 == static_cast<uintmax_t>(original.nbytes()) % 64);
      std::filesystem::remove(path);
    }
  }
}

TEST_CASE("npy errors name the file and what was expected", "[npy]") {
  const std::string path = temp_path("errors.npy");
  CHECK(error_of([&] { write_npy(path, at::zeros({2}, at::kDouble)); }) ==
        path + ": cannot write dtype float64 (expected uint8, float32 or int64)");
  CHECK(error_of([&] { read_npy(path + ".missing"); }) == path + ".missing: cannot open file");
  std::ofstream(path) << "P6 not numpy";
  CHECK(error_of([&] { read_npy(path); }) == path + ": not a .npy file (no \\x93NUMPY magic)");
  std::filesystem::remove(path);
}

}  // namespace svqa
