#include "benchmarks/speed/process_memory.h"

#include <fstream>
#include <sstream>
#include <string>

#include "core/nn/large_allocations.h"

namespace svqa {

ProcessMemory process_memory() {
  ProcessMemory m;
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    std::istringstream fields(line);
    std::string key;
    int64_t kib = 0;
    fields >> key >> kib;
    if (key == "VmRSS:") m.rss_bytes = kib * 1024;
    if (key == "VmHWM:") m.peak_bytes = kib * 1024;
  }
  const MallocUsage usage = malloc_usage();
  m.malloc_live_bytes = usage.live_bytes;
  m.malloc_heap_bytes = usage.held_bytes;
  return m;
}

bool reset_peak_memory() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return static_cast<bool>(clear);
}

}  // namespace svqa
