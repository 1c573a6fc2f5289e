#pragma once
// Listing and bounding a memory cache (`svqa cache ls|rm|gc`, `memory.max_gb`): entries by their
// last use (a replay touches its entry), the least recently used removed first.

#include <cstdint>
#include <string>
#include <vector>

namespace svqa {

struct CacheEntryInfo {
  std::string key;
  int64_t bytes = 0;
  int64_t last_used_ns = 0;  // nanoseconds since the epoch: when it was written or last replayed
};

// Every finished entry of the cache folder `dir`, least recently used first (temporary folders
// of writers are not entries). Throws std::runtime_error naming `dir` when it is not a folder.
std::vector<CacheEntryInfo> cache_entries(const std::string& dir);

// Removes entries, least recently used first, until the cache holds at most `max_bytes`; never
// `keep` (the entry just written). Returns the removed entries.
std::vector<CacheEntryInfo> shrink_cache(const std::string& dir, int64_t max_bytes, const std::string& keep = "");

}  // namespace svqa
