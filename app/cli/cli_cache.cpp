// `svqa cache ls|rm|gc DIR`: a memory cache's entries (memory.cache, docs/experiments.md), removed
// by key or bounded in size, least recently used first.

#include <cmath>
#include <ctime>
#include <iostream>
#include <string>
#include <vector>

#include "app/cli/cli_commands.h"
#include "core/io/format.h"
#include "engine/snapshot/cache_upkeep.h"
#include "engine/snapshot/memory_cache.h"

namespace svqa {
namespace {

constexpr const char* kCacheUsage = R"(usage: svqa cache ls DIR              entries, least recently used first: key, GB, last used (UTC)
       svqa cache rm DIR KEY...       remove these entries
       svqa cache gc DIR --max-gb G   remove least recently used entries until DIR holds at most G GB
)";

std::string utc(int64_t seconds) {
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &tm);
  return text;
}

double gb(int64_t bytes) { return static_cast<double>(bytes) / 1e9; }

int cache_gc(const std::string& dir, const std::vector<std::string>& rest) {
  if (rest.size() != 2 || rest[0] != "--max-gb") throw UsageError("gc takes --max-gb G");
  double max_gb = -1;
  try {
    size_t used = 0;
    max_gb = std::stod(rest[1], &used);
    if (used != rest[1].size()) max_gb = -1;
  } catch (const std::exception&) {
  }
  if (!(max_gb >= 0 && max_gb <= 1e6)) throw UsageError("--max-gb: expected a number of GB in [0, 1e6], got '" + rest[1] + "'");
  const auto removed = shrink_cache(dir, static_cast<int64_t>(std::floor(max_gb * 1e9)));
  int64_t freed = 0;
  for (const auto& e : removed) freed += e.bytes, std::cout << "removed " << e.key << "\n";
  std::cout << fmt::format("{}: {} entries removed, {:.3f} GB freed\n", dir, removed.size(), gb(freed));
  return 0;
}

}  // namespace

int cmd_cache(int argc, const char* const* argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && (args[0] == "-h" || args[0] == "--help")) {
    std::cout << kCacheUsage;
    return 0;
  }
  if (args.size() < 2) throw UsageError(std::string("expected ls, rm or gc and the cache folder\n") + kCacheUsage);
  const std::string action = args[0], dir = args[1];
  const std::vector<std::string> rest(args.begin() + 2, args.end());
  if (action == "ls") {
    if (!rest.empty()) throw UsageError("ls takes only the cache folder");
    int64_t total = 0;
    for (const auto& e : cache_entries(dir)) {
      total += e.bytes;
      std::cout << fmt::format("{}  {:10.3f} GB  {}\n", e.key, gb(e.bytes), utc(e.last_used_ns / 1000000000));
    }
    std::cout << fmt::format("{}: {:.3f} GB\n", dir, gb(total));
    return 0;
  }
  if (action == "rm") {
    if (rest.empty()) throw UsageError("rm takes the keys to remove");
    const auto entries = cache_entries(dir);
    for (const auto& key : rest) {
      bool known = false;
      for (const auto& e : entries) known = known || e.key == key;
      if (!known) throw UsageError(dir + ": no entry " + key + " (svqa cache ls " + dir + ")");
    }
    const MemoryCache cache(dir);
    for (const auto& key : rest) cache.remove(key), std::cout << "removed " << key << "\n";
    return 0;
  }
  if (action == "gc") return cache_gc(dir, rest);
  throw UsageError("unknown action '" + action + "': expected ls, rm or gc");
}

}  // namespace svqa
