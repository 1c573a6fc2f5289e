#pragma once
// Reading JSON Lines files (predictions.jsonl, the judge's cache) with one rule for a killed writer.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace svqa {

struct JsonLine {
  size_t line = 0;  // 1-based, for messages
  nlohmann::json value;
};

struct JsonLinesFile {
  std::vector<JsonLine> lines;
  // Bytes up to the end of the last line kept: where a writer that appends goes on.
  std::uintmax_t kept_bytes = 0;
  bool last_line_unterminated = false;  // the last line kept has no newline (an appender writes one first)
  size_t torn_line = 0;                 // non-zero: this last line was torn and left out
};

// The rule: blank lines are skipped; the last line, when it has no newline and does not parse,
// is what a writer killed mid-line leaves: left out (`torn_line`). Any other line that does not
// parse throws std::runtime_error "FILE:LINE: not JSON: ...". A missing file throws too.
JsonLinesFile read_json_lines(const std::string& path);

}  // namespace svqa
