#include "engine/snapshot/model_identity.h"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "core/io/checksum.h"

namespace svqa {
namespace {

namespace fs = std::filesystem;

bool is_export_dir(const std::string& value) {
  std::error_code ec;
  return !value.empty() && fs::is_directory(value, ec) && fs::is_regular_file(fs::path(value) / "manifest.json", ec);
}

// Every regular file under `dir`, by its path inside it, with its size and checksum.
nlohmann::json identity_of(const std::string& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  nlohmann::json out = nlohmann::json::object();
  for (const auto& f : files)
    out[fs::relative(f, dir).generic_string()] = {{"bytes", fs::file_size(f)}, {"checksum", hex64(file_checksum64(f.string()))}};
  return {{"path", dir}, {"files", out}};
}

void collect(const ConfigNode& node, const std::string& key, nlohmann::json& out) {
  if (node.is_scalar() && is_export_dir(node.scalar)) out[key] = identity_of(node.scalar);
  for (const auto& e : node.entries) collect(e.value, key.empty() ? e.key : key + "." + e.key, out);
  for (size_t i = 0; i < node.items.size(); ++i) collect(node.items[i], key + "." + std::to_string(i), out);
}

}  // namespace

nlohmann::json model_identities(const ConfigNode& resolved) {
  nlohmann::json out = nlohmann::json::object();
  collect(resolved, "", out);
  return out;
}

std::optional<std::string> first_model_difference(const nlohmann::json& recorded, const nlohmann::json& now) {
  for (const auto& [key, was] : recorded.items()) {
    if (!now.contains(key)) return key + " (" + was.value("path", "") + " there, no export now)";
    const auto& is = now[key];
    const std::string path = is.value("path", "");
    if (was.value("path", "") != path) return key + " (" + was.value("path", "") + " there, " + path + " now)";
    const auto& before = was["files"];
    const auto& after = is["files"];
    for (const auto& [file, v] : before.items()) {
      if (!after.contains(file)) return key + " (" + path + ": " + file + " is gone)";
      if (after[file] != v) return key + " (" + path + ": " + file + " changed)";
    }
    for (const auto& [file, v] : after.items())
      if (!before.contains(file)) return key + " (" + path + ": " + file + " is new)";
  }
  for (const auto& [key, is] : now.items())
    if (!recorded.contains(key)) return key + " (no export there, " + is.value("path", "") + " now)";
  return std::nullopt;
}

}  // namespace svqa
