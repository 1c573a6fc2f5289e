#include "engine/snapshot/memory_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/io/checksum.h"
#include "core/io/environment_error.h"

namespace svqa {
namespace fs = std::filesystem;
namespace {

constexpr const char* kData = MemoryCache::kDataFile;
constexpr const char* kIndex = "index.json";
constexpr const char* kIndexSum = MemoryCache::kUsedFile;

std::optional<std::string> read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_synced(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw EnvironmentError(path + ": cannot create: " + std::strerror(errno));
  const char* p = text.data();
  for (size_t left = text.size(); left > 0;) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int why = errno;
      ::close(fd);
      throw EnvironmentError(path + ": cannot write: " + std::strerror(why));
    }
    p += n, left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) throw EnvironmentError(path + ": cannot flush: " + std::strerror(errno));
}

// Why entry `dir` cannot serve `material`, or "" when it can; its log in `events`, its data file
// opened in `data` (checked by its descriptor: what is checked is what the replay reads).
std::string check_entry(const std::string& dir, const nlohmann::json& material, nlohmann::json& events,
                        std::shared_ptr<const HeldFile>& data) {
  const auto text = read_text(dir + "/" + kIndex);
  const auto sum = read_text(dir + "/" + kIndexSum);
  if (!text || !sum) return "index missing";
  if (hex64(checksum64(text->data(), text->size())) != *sum) return "index checksum differs";
  nlohmann::json index;
  try {
    index = nlohmann::json::parse(*text);
  } catch (const nlohmann::json::exception&) {
    return "index is not JSON";
  }
  if (!index.is_object() || index.value("key", nlohmann::json()) != material) return "written for another key";
  try {
    data = HeldFile::open(dir + "/" + kData);
  } catch (const EnvironmentError&) {
    return "data file missing";
  }
  struct stat st {};
  if (::fstat(data->fd(), &st) != 0) return "data file cannot be read";
  const int64_t bytes = st.st_size;
  if (bytes != index.value("data_bytes", int64_t{-1}))
    return "data file has " + std::to_string(bytes) + " bytes, " + index.value("data_bytes", nlohmann::json()).dump() +
           " written";
  if (!index.contains("events") || !index["events"].is_array()) return "index has no log";
  events = std::move(index["events"]);
  return "";
}

}  // namespace

MemoryCache::MemoryCache(std::string dir) : dir_(std::move(dir)) { fs::create_directories(dir_); }

std::optional<CachedSnapshot> MemoryCache::find(const std::string& key, const nlohmann::json& material,
                                                std::ostream& log) const {
  const std::string dir = entry_dir(key);
  if (!fs::exists(dir)) return std::nullopt;
  CachedSnapshot out;
  const std::string why = check_entry(dir, material, out.events, out.data);
  if (!why.empty()) {
    log << "memory cache: " << dir << ": " << why << "; not used: encoding the stream again\n";
    remove(key);
    return std::nullopt;
  }
  std::error_code ignored;  // a read-only cache still serves; its entries' use is then not recorded
  fs::last_write_time(dir + "/" + kUsedFile, fs::file_time_type::clock::now(), ignored);
  return out;
}

void MemoryCache::remove(const std::string& key) const {
  // Renamed away first, so a reader never sees half of it; then deleted.
  const std::string dir = entry_dir(key), doomed = dir + ".removed." + std::to_string(::getpid());
  std::error_code ignored;
  fs::rename(dir, doomed, ignored);
  fs::remove_all(doomed, ignored);
}

namespace {

int open_lock(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT, 0644);
  if (fd < 0) throw EnvironmentError(path + ": cannot open lock: " + std::strerror(errno));
  return fd;
}

// Takes the flock of `fd` if no one holds it.
bool take(int fd, const std::string& path) {
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) return false;
    if (errno != EINTR) throw EnvironmentError(path + ": cannot lock: " + std::strerror(errno));
  }
  return true;
}

bool alive(int pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }

}  // namespace

std::unique_ptr<MemoryCache::Lock> MemoryCache::try_lock(const std::string& key) const {
  const std::string path = dir_ + "/" + key + ".lock";
  const int fd = open_lock(path);
  if (take(fd, path)) return std::make_unique<Lock>(fd);
  ::close(fd);
  return nullptr;
}

bool MemoryCache::locked(const std::string& key) const {
  return try_lock(key) == nullptr;  // taken and released at once when free
}

std::string MemoryCache::writer_folder(const std::string& key) const {
  const std::string prefix = key + ".tmp.";
  std::error_code ignored;
  for (const auto& e : fs::directory_iterator(dir_, ignored)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && alive(std::atoi(name.c_str() + prefix.size())) &&
        fs::exists(e.path() / kLiveLog, ignored))
      return e.path().string() + "/";
  }
  return "";
}

MemoryCache::Lock::~Lock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

std::string MemoryCache::reader_link(const std::string& key) const {
  const std::string prefix = key + ".reading.";
  std::error_code ignored;
  for (const auto& e : fs::directory_iterator(dir_, ignored)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && !alive(std::atoi(name.c_str() + prefix.size()))) fs::remove(e.path(), ignored);
  }
  return entry_dir(key) + ".reading." + std::to_string(::getpid()) + ".kv";
}

std::string MemoryCache::begin_entry(const std::string& key) const {
  // With the entry's lock held, any temporary folder of the key is a killed writer's.
  for (const auto& e : fs::directory_iterator(dir_))
    if (e.path().filename().string().rfind(key + ".tmp.", 0) == 0) fs::remove_all(e.path());
  const std::string folder = dir_ + "/" + key + ".tmp." + std::to_string(::getpid());
  fs::create_directories(folder);
  return folder + "/";
}

void MemoryCache::commit_entry(const std::string& key, const std::string& folder, const nlohmann::json& material,
                               const nlohmann::json& events, int64_t data_bytes) const {
  const std::string text = nlohmann::json{{"key", material}, {"data_bytes", data_bytes}, {"events", events}}.dump();
  write_synced(folder + kIndex, text);
  write_synced(folder + kIndexSum, hex64(checksum64(text.data(), text.size())));
  std::error_code error;
  fs::rename(fs::path(folder).parent_path(), entry_dir(key), error);
  if (error) abandon_entry(folder);  // an entry is there already (written meanwhile): keep it
}

void MemoryCache::abandon_entry(const std::string& folder) const {
  std::error_code ignored;
  fs::remove_all(fs::path(folder).parent_path(), ignored);
}

}  // namespace svqa
