#include "engine/snapshot/video_identity.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <vector>

#include "core/io/checksum.h"

namespace svqa {
namespace {

constexpr int64_t kFilePieces = 16, kFilePieceBytes = 64 << 10;  // a video file: 1 MiB read
constexpr int64_t kImagePieces = 3, kImagePieceBytes = 4 << 10;  // each image of a folder: 12 KiB

// Feeds `sum` with the file's size and `pieces` pieces of `piece_bytes` spread evenly over it (the
// first at byte 0, the last ending at its end; the whole file when they would cover it); false
// when it cannot be read.
bool feed_sampled(const std::string& path, int64_t pieces, int64_t piece_bytes, Checksum64& sum) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  bool ok = ::fstat(fd, &st) == 0;
  const int64_t size = ok ? static_cast<int64_t>(st.st_size) : 0;
  sum.update(&size, sizeof size);
  const bool whole = size <= pieces * piece_bytes;
  std::vector<char> buffer(static_cast<size_t>(whole ? size : piece_bytes));
  for (int64_t i = 0; ok && i < (whole ? 1 : pieces); ++i) {
    const int64_t at = whole ? 0 : (size - piece_bytes) * i / (pieces - 1);
    for (int64_t done = 0; ok && done < static_cast<int64_t>(buffer.size());) {
      const ssize_t n = ::pread(fd, buffer.data() + done, buffer.size() - done, static_cast<off_t>(at + done));
      ok = n > 0;
      done += ok ? n : 0;
    }
    if (ok) sum.update(buffer.data(), buffer.size());
  }
  ::close(fd);
  return ok;
}

std::optional<nlohmann::json> folder_identity(const std::string& path) {
  namespace fs = std::filesystem;
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& e : fs::directory_iterator(path, error))
    if (e.is_regular_file(error)) names.push_back(e.path().filename().string());
  if (error) return std::nullopt;
  std::sort(names.begin(), names.end());
  Checksum64 sum;
  for (const auto& name : names) {
    sum.update(name.data(), name.size() + 1);  // with its terminating zero: names cannot run together
    if (!feed_sampled(path + "/" + name, kImagePieces, kImagePieceBytes, sum)) return std::nullopt;
  }
  return nlohmann::json{{"files", names.size()}, {"sampled", hex64(sum.digest())}};
}

}  // namespace

nlohmann::json video_identity(const std::string& path) {
  const nlohmann::json missing = {{"path", path}, {"missing", true}};
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return missing;
  if (S_ISDIR(st.st_mode)) return folder_identity(path).value_or(missing);
  Checksum64 sum;
  if (!feed_sampled(path, kFilePieces, kFilePieceBytes, sum)) return missing;
  return {{"bytes", static_cast<int64_t>(st.st_size)}, {"sampled", hex64(sum.digest())}};
}

}  // namespace svqa
