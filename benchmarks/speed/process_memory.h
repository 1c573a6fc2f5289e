#pragma once
// Resident memory of this process, from /proc/self/status (Linux); zeros where it cannot be read.

#include <cstdint>

namespace svqa {

struct ProcessMemory {
  int64_t rss_bytes = 0;   // VmRSS: resident now
  int64_t peak_bytes = 0;  // VmHWM: the most resident since start or the last reset
  // The allocator's live bytes and what it holds besides (core/nn/large_allocations.h, malloc_usage).
  int64_t malloc_live_bytes = 0, malloc_heap_bytes = 0;
};

ProcessMemory process_memory();

// Starts the peak over from the current RSS (writes 5 to /proc/self/clear_refs); false where the
// kernel does not allow it, and the peak then counts from the start of the process.
bool reset_peak_memory();

}  // namespace svqa
