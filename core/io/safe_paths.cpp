#include "core/io/safe_paths.h"

#include <filesystem>

namespace svqa {

std::string safe_path_component(const std::string& text) {
  if (text.empty() || text == "." || text == "..") return "_";
  std::string out = text;
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '/' || c == '\\' || u < 0x20 || u == 0x7F) c = '_';
  }
  return out;
}

bool stays_inside(const std::string& relative) {
  const std::filesystem::path p(relative);
  if (relative.empty() || p.is_absolute() || p.has_root_name() || p.has_root_directory()) return false;
  const std::filesystem::path normal = p.lexically_normal();
  return !normal.empty() && *normal.begin() != ".." && normal != ".";
}

}  // namespace svqa
