#pragma once
// The memory cache (`memory.cache: DIR`): one folder per snapshot, DIR/<key>/ holding
//   memory.kv   the raw tensors (snapshot_file.h), mapped by the bank, never parsed;
//   index.json  the key material and the log of encoder calls (snapshot_log.h);
//   index.sum   checksum64 of index.json's bytes.
// An entry is written in DIR/<key>.tmp.<pid>/ and renamed into place whole, so a reader sees a
// complete entry or none; a lock file DIR/<key>.lock (flock) is held while a stream is encoded for
// it, so two runs sharing the cache (a grid's shards) encode each stream once.

#include <optional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

namespace svqa {

struct CachedSnapshot {
  std::string data_path;  // memory.kv
  nlohmann::json events;  // the log
};

class MemoryCache {
 public:
  // The file whose modification time says when an entry was last written or replayed.
  static constexpr const char* kUsedFile = "index.sum";

  explicit MemoryCache(std::string dir);

  // The sound entry for `key`: index checksum, key material and data size verified (the K/V
  // tensors' own checksums are checked as questions read them), marked as used now. A damaged or
  // mismatched entry is one line on `log` naming it, is removed, and is a miss.
  std::optional<CachedSnapshot> find(const std::string& key, const nlohmann::json& material, std::ostream& log) const;
  // Removes entry `key` (after it turned out damaged while answering).
  void remove(const std::string& key) const;

  // Holds DIR/<key>.lock until destroyed. While another process holds it (encoding that stream),
  // says so on `log` and waits for it.
  class Lock {
   public:
    Lock(const MemoryCache& cache, const std::string& key, std::ostream& log);
    ~Lock();
    Lock(const Lock&) = delete;
    Lock& operator=(const Lock&) = delete;
    bool waited() const { return waited_; }

   private:
    int fd_ = -1;
    bool waited_ = false;
  };

  // A fresh temporary folder for entry `key` (leftovers of killed writers removed: call it with
  // the entry's Lock held); its data file is <folder>/memory.kv.
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
