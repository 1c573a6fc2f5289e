#pragma once
// A memory snapshot's log as it is written (`svqa encode` with a `svqa run` reading along): one
// record per line, "<checksum64 of the JSON, 16 hex> <JSON>\n". The writer appends each record in
// one write and flushes it to disk before the next; the data it names was flushed before it. A
// reader takes only whole lines whose checksum matches, so it never sees a torn record: a line
// without its newline is one still being written; a whole line that does not match is damage.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace svqa {

class LiveLogWriter {
 public:
  // Creates `path`. Throws EnvironmentError naming it on a failed create, write or flush.
  explicit LiveLogWriter(std::string path);
  ~LiveLogWriter();
  LiveLogWriter(const LiveLogWriter&) = delete;
  LiveLogWriter& operator=(const LiveLogWriter&) = delete;
  // Appends `record` and flushes it to disk.
  void append(const nlohmann::json& record);

 private:
  std::string path_;
  int fd_ = -1;
};

class LiveLogReader {
 public:
  // Opens `path`; throws SnapshotDamaged naming it when it cannot.
  explicit LiveLogReader(std::string path);
  ~LiveLogReader();
  LiveLogReader(const LiveLogReader&) = delete;
  LiveLogReader& operator=(const LiveLogReader&) = delete;
  // The records completed since the last call (none while the writer is mid-record). Throws
  // SnapshotDamaged naming the file on a whole line whose checksum differs or is not JSON.
  std::vector<nlohmann::json> read_new();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  int64_t offset_ = 0;  // first byte not yet taken
  int64_t records_ = 0;
  std::string partial_;  // bytes of a line still being written
};

}  // namespace svqa
