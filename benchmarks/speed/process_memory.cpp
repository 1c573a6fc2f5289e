#include "benchmarks/speed/process_memory.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <fstream>
#include <sstream>
#include <string>

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
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
  const struct mallinfo2 info = mallinfo2();
  m.malloc_live_bytes = static_cast<int64_t>(info.uordblks + info.hblkhd);
  m.malloc_heap_bytes = static_cast<int64_t>(info.arena);
#endif
  return m;
}

bool reset_peak_memory() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return static_cast<bool>(clear);
}

}  // namespace svqa
