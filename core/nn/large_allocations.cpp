#include "core/nn/large_allocations.h"

#if defined(SVQA_JEMALLOC)
#include <jemalloc/jemalloc.h>
#elif defined(__GLIBC__)
#include <malloc.h>
#endif

#include <cstdint>
#include <string>

namespace svqa {

void map_large_allocations() {
#if !defined(SVQA_JEMALLOC) && defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
}

void release_free_heap() {
#if defined(SVQA_JEMALLOC)
  static const std::string purge_all = "arena." + std::to_string(MALLCTL_ARENAS_ALL) + ".purge";
  mallctl(purge_all.c_str(), nullptr, nullptr, nullptr, 0);
#elif defined(__GLIBC__)
  malloc_trim(0);
#endif
}

bool jemalloc_linked() {
#if defined(SVQA_JEMALLOC)
  return true;
#else
  return false;
#endif
}

MallocUsage malloc_usage() {
  MallocUsage u;
#if defined(SVQA_JEMALLOC)
  uint64_t epoch = 1;  // the statistics are a snapshot, refreshed by writing the epoch
  size_t size = sizeof(epoch);
  mallctl("epoch", &epoch, &size, &epoch, size);
  size_t value = 0;
  size = sizeof(value);
  if (mallctl("stats.allocated", &value, &size, nullptr, 0) == 0) u.live_bytes = static_cast<int64_t>(value);
  if (mallctl("stats.resident", &value, &size, nullptr, 0) == 0) u.held_bytes = static_cast<int64_t>(value);
#elif defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
  const struct mallinfo2 info = mallinfo2();
  u.live_bytes = static_cast<int64_t>(info.uordblks + info.hblkhd);
  u.held_bytes = static_cast<int64_t>(info.arena);
#endif
  return u;
}

}  // namespace svqa
