#pragma once
// Writing result files so that a crash never leaves a half-written one behind.

#include <string>

namespace svqa {

// Writes `content` to a temporary file beside `path`, flushes it to disk, then renames it
// over `path`. Creates parent directories. Throws std::runtime_error naming the path.
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace svqa
