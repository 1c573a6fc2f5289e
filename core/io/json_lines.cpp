#include "core/io/json_lines.h"

#include <fstream>
#include <stdexcept>

namespace svqa {

JsonLinesFile read_json_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot read");
  JsonLinesFile file;
  std::string line;
  std::uintmax_t offset = 0;
  for (size_t n = 1; std::getline(in, line); ++n) {
    const bool terminated = !in.eof();  // getline stopped at a newline, not at the end of the file
    offset += line.size() + (terminated ? 1 : 0);
    if (line.find_first_not_of(" \t\r") == std::string::npos) {
      if (terminated) file.kept_bytes = offset;
      continue;
    }
    try {
      file.lines.push_back({n, nlohmann::json::parse(line)});
    } catch (const nlohmann::json::exception& e) {
      if (!terminated) {
        file.torn_line = n;
        break;
      }
      throw std::runtime_error(path + ":" + std::to_string(n) + ": not JSON: " + e.what());
    }
    file.kept_bytes = offset;
    file.last_line_unterminated = !terminated;
  }
  return file;
}

}  // namespace svqa
