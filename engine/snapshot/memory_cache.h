#pragma once
// The memory cache (`memory.cache: DIR`): one folder per snapshot, DIR/<key>/ holding
//   memory.kv   the raw tensors (snapshot_file.h), mapped by the bank, never parsed;
//   index.json  the key material and the log of encoder calls (snapshot_log.h);
//   index.sum   checksum64 of index.json's bytes;
//   log.jsonl   the same log as it was written, record by record (live_log.h).
// An entry is written in DIR/<key>.tmp.<pid>/ and renamed into place whole, so a reader sees a
// complete entry or none; a lock file DIR/<key>.lock (flock) is held while a stream is encoded for
// it, so two runs sharing the cache (a grid's shards) encode each stream once: the second reads
// the first's log.jsonl as it grows (followed_snapshot.h).

#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/memory/held_file.h"

namespace svqa {

struct CachedSnapshot {
  std::shared_ptr<const HeldFile> data;  // memory.kv, open: it reads whatever becomes of the entry
  nlohmann::json events;                 // the log
};

class MemoryCache {
 public:
  // The file whose modification time says when an entry was last written or replayed.
  static constexpr const char* kUsedFile = "index.sum";
  static constexpr const char* kDataFile = "memory.kv";
  static constexpr const char* kLiveLog = "log.jsonl";

  explicit MemoryCache(std::string dir);

  // The sound entry for `key`: index checksum, key material and data size verified (the K/V
  // tensors' own checksums are checked as questions read them), marked as used now, its data file
  // open. A damaged or mismatched entry is one line on `log` naming it, is removed, and is a miss;
  // so is one removed while it is looked at (svqa cache gc|rm).
  std::optional<CachedSnapshot> find(const std::string& key, const nlohmann::json& material, std::ostream& log) const;
  // Removes entry `key` (after it turned out damaged while answering).
  void remove(const std::string& key) const;

  // DIR/<key>.lock, held until destroyed.
  class Lock {
   public:
    explicit Lock(int fd) : fd_(fd) {}
    ~Lock();
    Lock(const Lock&) = delete;
    Lock& operator=(const Lock&) = delete;

   private:
    int fd_ = -1;
  };
  // The entry's lock, or nullptr while another process holds it (encoding that stream).
  std::unique_ptr<Lock> try_lock(const std::string& key) const;
  // Whether a process holds the entry's lock now.
  bool locked(const std::string& key) const;
  // The temporary folder of the live process writing entry `key` (with a slash), or "" when there is none yet.
  std::string writer_folder(const std::string& key) const;
  // Where this process links the data file of entry `key` while reading it as it is written:
  // DIR/<key>.reading.<pid>.kv; those of readers no longer running are removed.
  std::string reader_link(const std::string& key) const;

  // A fresh temporary folder for entry `key` (leftovers of killed writers removed: call it with
  // the entry's Lock held); its data file is <folder>/memory.kv, its log <folder>/log.jsonl.
  std::string begin_entry(const std::string& key) const;
  // Writes the index into `folder` and renames it to the entry; an entry already there is kept and
  // `folder` removed. Throws EnvironmentError naming the folder on a failed write.
  void commit_entry(const std::string& key, const std::string& folder, const nlohmann::json& material,
                    const nlohmann::json& events, int64_t data_bytes) const;
  // Removes an unfinished temporary folder.
  void abandon_entry(const std::string& folder) const;

  std::string entry_dir(const std::string& key) const { return dir_ + "/" + key; }

 private:
  std::string dir_;
};

}  // namespace svqa
