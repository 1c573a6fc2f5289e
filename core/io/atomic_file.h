#pragma once
// Writing result files so that a crash never leaves a half-written one behind.

#include <string>

namespace svqa {

// Writes `content` to a temporary file "<path>.tmp.<pid>" beside `path`, flushes it to disk, then
// renames it over `path`. Creates parent directories. Throws std::runtime_error naming the path.
// First removes the temporaries of `path` that writers killed mid-write left behind (see below).
void write_file_atomically(const std::string& path, const std::string& content);

// Removes "<path>.tmp.<pid>" files whose pid is no live process on this host (a writer killed
// between open and rename). A live pid's file is kept: it may be renamed any moment.
void remove_stale_temporaries(const std::string& path);

}  // namespace svqa
