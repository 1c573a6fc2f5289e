#pragma once
// Reading JSON that people or other programs wrote (annotations, manifests, tokenizers, records).
// nlohmann's parser is iterative, but copying, comparing and printing a value recurse once per
// level: a file nested 10^5 deep parses, then crashes whoever touches it. So every such file is
// checked first, in one linear pass without recursion: nesting depth, string length, file kind and
// size. A leading UTF-8 byte order mark (Windows tools write one) is skipped.

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace svqa {

inline constexpr int64_t kMaxJsonDepth = 512;                 // arrays/objects inside each other
inline constexpr int64_t kMaxJsonStringBytes = 1 << 20;       // one string (or key), as written
inline constexpr int64_t kMaxJsonFileBytes = int64_t{1} << 30;  // one file

// "" when `text` nests at most kMaxJsonDepth deep and has no string over kMaxJsonStringBytes;
// else the problem with its line: "nested deeper than 512 levels (line 1)".
std::string json_limits_problem(std::string_view text);

// `text` without a leading UTF-8 byte order mark (EF BB BF).
std::string_view without_utf8_bom(std::string_view text);

// The whole of `path`, which must be a regular file (a FIFO would block forever, a device never
// end) of at most kMaxJsonFileBytes. Throws std::runtime_error "PATH: what was expected".
std::string read_json_file_text(const std::string& path);

// Parses `text` (BOM skipped) once json_limits_problem passes. Throws std::runtime_error with the
// limit's problem or "not valid JSON: ..." (without a file name: callers add theirs).
nlohmann::json parse_json_text(std::string_view text);

// read_json_file_text + parse_json_text, every error prefixed "PATH: ".
nlohmann::json read_json_file(const std::string& path);

}  // namespace svqa
