#include "app/run/shard/stream_shard.h"

#include <filesystem>
#include <regex>
#include <stdexcept>

namespace svqa {

FolderPart folder_part(const StreamShard& shard) { return {shard.stem() + ".lock", shard.stem() + ".jsonl"}; }

RunPart run_part(const std::string& dir, const StreamShard& shard) {
  return {[shard](size_t stream) { return shard.takes(stream); }, dir + "/" + shard.stem() + ".jsonl"};
}

int64_t recorded_shard_count(const std::string& dir) {
  namespace fs = std::filesystem;
  static const std::regex kRecords(R"((\d+)-of-(\d+)\.jsonl)");
  int64_t count = 0;
  std::string first;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir + "/shards", ec)) {
    std::smatch m;
    const std::string name = entry.path().filename().string();
    if (!std::regex_match(name, m, kRecords)) continue;
    const int64_t n = std::stoll(m[2]);
    if (count && n != count)
      throw std::runtime_error(dir + "/shards: holds records of " + std::to_string(count) + " shards (" + first +
                               ") and of " + std::to_string(n) + " (" + name +
                               "): a stream would be in both; move one set away");
    if (!count) count = n, first = name;
  }
  return count;
}

void check_shard_fits(const std::string& dir, const StreamShard& shard) {
  const int64_t recorded = recorded_shard_count(dir);
  if (recorded && recorded != shard.count)
    throw std::runtime_error("shard " + shard.name() + ": " + dir + "/shards holds the records of " +
                             std::to_string(recorded) + " stream shards; with " + std::to_string(shard.count) +
                             " their streams would be answered twice: use --shard i/" + std::to_string(recorded));
}

}  // namespace svqa
