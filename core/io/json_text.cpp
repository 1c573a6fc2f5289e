#include "core/io/json_text.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace svqa {

std::string json_limits_problem(std::string_view text) {
  int64_t depth = 0, line = 1, string_start_line = 0;
  size_t string_start = 0;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') ++line;
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      } else if (static_cast<int64_t>(i - string_start) > kMaxJsonStringBytes) {
        return "a string longer than " + std::to_string(kMaxJsonStringBytes) + " bytes (line " +
               std::to_string(string_start_line) + "); no field needs one";
      }
      continue;
    }
    if (c == '"') {
      in_string = true, string_start = i, string_start_line = line;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        return "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels (line " + std::to_string(line) + ")";
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return "";
}

std::string_view without_utf8_bom(std::string_view text) {
  return text.substr(0, 3) == "\xEF\xBB\xBF" ? text.substr(3) : text;
}

std::string read_json_file_text(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw std::runtime_error(path + ": cannot read: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw std::runtime_error(path + ": " +
                             (S_ISDIR(st.st_mode)    ? "is a directory"
                              : S_ISFIFO(st.st_mode) ? "is a FIFO (named pipe)"
                                                     : "is not a regular file") +
                             ", expected a JSON file");
  if (st.st_size > kMaxJsonFileBytes)
    throw std::runtime_error(path + ": " + std::to_string(st.st_size) + " bytes, more than the " +
                             std::to_string(kMaxJsonFileBytes) + " a JSON file may have");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot read: " + std::strerror(errno));
  std::string text(static_cast<size_t>(st.st_size), '\0');
  in.read(text.data(), st.st_size);
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

nlohmann::json parse_json_text(std::string_view text) {
  text = without_utf8_bom(text);
  if (const std::string problem = json_limits_problem(text); !problem.empty()) throw std::runtime_error(problem);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("not valid JSON: ") + e.what());
  }
}

nlohmann::json read_json_file(const std::string& path) {
  const std::string text = read_json_file_text(path);
  try {
    return parse_json_text(text);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

}  // namespace svqa
