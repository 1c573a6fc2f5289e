#pragma once
// What names a stream's frames in a memory snapshot's key: their bytes, sampled. A video replaced
// at the same path by another of the same size, its modification time set back (`cp -p`,
// `rsync -t`, an archive extracted again), is told apart; a video moved or copied elsewhere still
// matches. A file: its size and the checksum64 of 16 pieces of 64 KiB spread evenly from its first
// byte to its last (the whole file when it is at most 1 MiB: 1 MiB read per stream, whatever its
// length). A folder of images: each file's name, size and 3 pieces of 4 KiB (first, middle, last).

#include <string>

#include <nlohmann/json.hpp>

namespace svqa {

// {"bytes", "sampled"} for a file, {"files", "sampled"} for a folder, {"missing": true, "path"}
// when `path` cannot be read. Throws nothing.
nlohmann::json video_identity(const std::string& path);

}  // namespace svqa
