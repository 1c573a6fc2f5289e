// The programs' malloc (core/nn/large_allocations.h): jemalloc takes every allocation, LibTorch's
// tensors included (linking it is not enough if the loader resolves malloc to glibc first).

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <cstdlib>

#include "core/nn/large_allocations.h"

namespace svqa {
namespace {

constexpr int64_t kMiB = 1 << 20;

TEST_CASE("jemalloc takes malloc and LibTorch's CPU tensors", "[memory][allocator]") {
  if (!jemalloc_linked()) {
    WARN("built without jemalloc (SVQA_JEMALLOC=OFF or a sanitizer build): glibc's malloc");
    return;
  }
  auto live = [] { return malloc_usage().live_bytes; };
  const int64_t start = live();
  void* volatile p = std::malloc(static_cast<size_t>(16 * kMiB));  // volatile: the pair is not elided
  CHECK(live() - start >= 15 * kMiB);
  std::free(p);
  at::Tensor t = at::empty({16 * kMiB}, at::kByte);  // c10's CPU allocator: posix_memalign
  CHECK(live() - start >= 15 * kMiB);
  t.reset();
  CHECK(live() - start < 4 * kMiB);
}

}  // namespace
}  // namespace svqa
