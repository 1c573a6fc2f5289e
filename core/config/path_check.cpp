#include "core/config/path_check.h"

#include <filesystem>

namespace svqa {
namespace {

namespace fs = std::filesystem;

// "" when `path` is what `kind` asks for, else what is wrong with it.
std::string path_problem(const std::string& path, const std::string& kind) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (!fs::exists(status)) return "no such " + (kind == "file or directory" ? std::string("file or directory") : kind);
  if (kind == "file" && !fs::is_regular_file(status)) return "not a file";
  if (kind == "directory" && !fs::is_directory(status)) return "not a directory";
  return "";
}

void check_fields(const ConfigNode& node, const std::vector<FieldInfo>& fields, const std::string& path,
                  ErrorList& errors) {
  for (const auto& f : fields) {
    const ConfigNode* value = node.find(f.name);
    if (!value) continue;
    const std::string key = join_path(path, f.name);
    if (!f.fields.empty()) check_fields(*value, f.fields, key, errors);
    if (f.must_exist.empty() || !value->is_scalar() || value->scalar.empty()) continue;
    const std::string problem = path_problem(value->scalar, f.must_exist);
    if (!problem.empty())
      errors.add(value->loc, key, value->scalar + ": " + problem);
  }
}

}  // namespace

std::vector<std::string> missing_paths(const ExperimentConfig& cfg, const RegistrySections& registries) {
  ErrorList errors;
  for (const auto& [section, registry] : registries) {
    const ComponentChoice* choice = cfg.component(section);
    const ConfigNode* node = cfg.complete.find(section);
    const ConfigNode* options = node ? node->find("options") : nullptr;
    if (!choice || !options) continue;
    if (const RegistryEntryInfo* entry = registry->find_info(choice->type))
      check_fields(*options, entry->options->fields(), section + ".options", errors);
  }
  return errors.lines();
}

void require_paths(const ExperimentConfig& cfg, const RegistrySections& registries) {
  const auto lines = missing_paths(cfg, registries);
  if (!lines.empty()) throw ConfigError(lines);
}

}  // namespace svqa
