#include "engine/snapshot/followed_snapshot.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <thread>

#include "core/io/format.h"

namespace svqa {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPoll = std::chrono::milliseconds(20);

Clock::time_point after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

SnapshotWriterGone stalled(double wait_s) {
  return SnapshotWriterGone(fmt::format("the process encoding this stream logged nothing for {:g} s (memory.wait_s): "
                                        "encoding it here, not saved",
                                        wait_s),
                            false);
}

}  // namespace

std::unique_ptr<FollowedSnapshot> FollowedSnapshot::follow(const MemoryCache& cache, const std::string& key,
                                                           const nlohmann::json& material, double wait_s,
                                                           std::ostream& log) {
  log << "  memory cache: another process is encoding this stream (" << cache.entry_dir(key)
      << ".lock held): answering from its log as it goes\n"
      << std::flush;
  const auto deadline = after(wait_s);
  for (;;) {
    if (!cache.locked(key)) return nullptr;
    if (const std::string folder = cache.writer_folder(key); !folder.empty()) {
      std::unique_ptr<LiveLogReader> reader;
      try {
        reader = std::make_unique<LiveLogReader>(folder + MemoryCache::kLiveLog);
      } catch (const SnapshotDamaged&) {  // renamed into the entry meanwhile: look again
      }
      const std::string link = cache.reader_link(key);
      std::error_code ignored;
      std::filesystem::remove(link, ignored);
      if (reader && ::link((folder + MemoryCache::kDataFile).c_str(), link.c_str()) == 0) {
        return std::unique_ptr<FollowedSnapshot>(
            new FollowedSnapshot(cache, key, material, wait_s, log, std::move(reader), link));
      }
      if (reader && errno != ENOENT)
        throw EnvironmentError(link + ": cannot link the memory snapshot being written: " + std::strerror(errno));
    }
    if (Clock::now() > deadline) throw stalled(wait_s);
    std::this_thread::sleep_for(kPoll);
  }
}

FollowedSnapshot::FollowedSnapshot(const MemoryCache& cache, std::string key, nlohmann::json material, double wait_s,
                                   std::ostream& log, std::unique_ptr<LiveLogReader> reader, std::string link)
    : cache_(cache),
      key_(std::move(key)),
      wait_s_(wait_s),
      log_(log),
      reader_(std::move(reader)),
      link_(std::move(link)),
      material_(std::move(material)) {}

FollowedSnapshot::~FollowedSnapshot() {
  std::error_code ignored;  // the data stays readable through the files still open on it
  std::filesystem::remove(link_, ignored);
}

bool FollowedSnapshot::take_new() {
  auto records = reader_->read_new();
  for (auto& r : records) {
    if (!header_seen_) {  // the log's first record: the key it is written for
      if (!r.is_object() || r.value("key", nlohmann::json()) != material_)
        throw SnapshotWriterGone(reader_->path() + ": written for another key: encoding the stream here, not saved",
                                 false);
      header_seen_ = true;
    } else if (r.is_object() && r.value("end", false)) {
      ended_ = true;
    } else {
      events_.push_back(std::move(r));
    }
  }
  return !records.empty();
}

const nlohmann::json* FollowedSnapshot::entry(size_t i, const std::string& wanted) {
  for (; dropped_ < i && !events_.empty(); ++dropped_) events_.pop_front();  // replayed already: read once, in order
  take_new();
  if (i < dropped_ + events_.size()) return &events_[i - dropped_];
  if (ended_) return nullptr;
  log_ << "  memory cache: waiting for the encoder to log " << wanted << " (at most " << wait_s_
       << " s without a new record: memory.wait_s)\n"
       << std::flush;
  for (auto deadline = after(wait_s_);;) {
    std::this_thread::sleep_for(kPoll);
    const bool finished = !cache_.locked(key_);  // looked at first: a writer logs its last record before it lets go
    if (take_new()) {
      if (i < dropped_ + events_.size()) return &events_[i - dropped_];
      if (ended_) return nullptr;
      deadline = after(wait_s_);
      continue;
    }
    if (finished) throw SnapshotWriterGone(kSnapshotWriterDied, true);
    if (Clock::now() > deadline) throw stalled(wait_s_);
  }
}

}  // namespace svqa
