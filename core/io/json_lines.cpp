#include "core/io/json_lines.h"
#include "core/io/json_text.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace svqa {

JsonLinesFile read_json_lines(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))  // would open and read as an empty file
    throw std::runtime_error(path + ": is a directory, expected a JSON Lines file");
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
      if (const std::string problem = json_limits_problem(line); !problem.empty())
        throw std::runtime_error(path + ":" + std::to_string(n) + ": " + problem);
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
