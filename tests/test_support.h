#pragma once
// Small helpers several test files share: a temporary directory, random frames, and running a
// Python reference script of tests/python/ with the project's .venv.

#include <ATen/ATen.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "models/frame_source.h"

namespace svqa::test {

// A fresh directory under the system's temporary directory, removed with everything in it.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "svqa_test_XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("cannot make a temporary directory in " + tmpl);
    path = tmpl;
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

// n random uint8 frames [n, h, w, 3] taken at `fps` (seeded, so every run sees the same).
inline Frames random_frames(int64_t n, int64_t h, int64_t w, double fps, uint64_t seed = 7) {
  at::manual_seed(seed);
  Frames f{at::randint(0, 256, {n, h, w, 3}, at::kByte), {}, fps};
  for (int64_t i = 0; i < n; ++i) f.timestamps.push_back(static_cast<double>(i) / fps);
  return f;
}

// Runs `.venv/bin/python tests/python/SCRIPT ARG` from the repository root (the tests' working
// directory); true when it exits with 0.
inline bool run_python(const std::string& script, const std::string& arg) {
  if (!std::filesystem::exists(".venv/bin/python")) throw std::runtime_error(".venv/bin/python not found (run scripts/setup.sh)");
  return std::system((".venv/bin/python tests/python/" + script + " '" + arg + "'").c_str()) == 0;
}

}  // namespace svqa::test
