#include "engine/snapshot/cache_upkeep.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <regex>
#include <stdexcept>

#include "engine/snapshot/memory_cache.h"

namespace svqa {
namespace fs = std::filesystem;

std::vector<CacheEntryInfo> cache_entries(const std::string& dir) {
  if (!fs::is_directory(dir)) throw std::runtime_error(dir + ": not a memory cache folder");
  static const std::regex key_name("[0-9a-f]{16}");
  std::vector<CacheEntryInfo> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (!e.is_directory() || !std::regex_match(name, key_name)) continue;
    CacheEntryInfo info;
    info.key = name;
    std::error_code error;
    for (const auto& f : fs::directory_iterator(e.path(), error))
      if (f.is_regular_file()) info.bytes += static_cast<int64_t>(f.file_size());
    const auto used = fs::last_write_time(e.path() / MemoryCache::kUsedFile, error);
    if (!error) {
      const auto when = std::chrono::time_point_cast<std::chrono::system_clock::duration>(
          used - fs::file_time_type::clock::now() + std::chrono::system_clock::now());
      info.last_used_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(when.time_since_epoch()).count();
    }
    out.push_back(info);
  }
  std::sort(out.begin(), out.end(), [](const CacheEntryInfo& a, const CacheEntryInfo& b) {
    return a.last_used_ns != b.last_used_ns ? a.last_used_ns < b.last_used_ns : a.key < b.key;
  });
  return out;
}

std::vector<CacheEntryInfo> shrink_cache(const std::string& dir, int64_t max_bytes, const std::string& keep) {
  const auto entries = cache_entries(dir);
  int64_t total = 0;
  for (const auto& e : entries) total += e.bytes;
  const MemoryCache cache(dir);
  std::vector<CacheEntryInfo> removed;
  for (const auto& e : entries) {
    if (total <= max_bytes) break;
    if (e.key == keep) continue;
    cache.remove(e.key);  // a run replaying it keeps its open files: they stay readable until closed
    total -= e.bytes;
    removed.push_back(e);
  }
  return removed;
}

}  // namespace svqa
