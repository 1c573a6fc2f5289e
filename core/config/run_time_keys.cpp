#include "core/config/run_time_keys.h"

#include "core/config/config_diff.h"

namespace svqa {

const std::vector<std::string>& run_time_only_keys() {
  static const std::vector<std::string> keys = {
      "runtime.threads",   "output.dir",        "stream.ram_budget_mb", "stream.spill_dir",
      "memory",            "judge.timeout_s",   "judge.max_attempts",   "judge.backoff_s",
      "judge.api_key_env", "judge.cache",       "description",          "label",
      "expected"};
  return keys;
}

ConfigNode binding_part(ConfigNode config) {
  for (const auto& key : run_time_only_keys()) {
    const size_t dot = key.find('.');
    if (dot == std::string::npos) {
      config.erase(key);
    } else if (ConfigNode* section = config.find(key.substr(0, dot))) {
      section->erase(key.substr(dot + 1));
    }
  }
  if (ConfigNode* runtime = config.find("runtime"))
    if (ConfigNode* device = runtime->find("device"); device && device->is_scalar())
      device->scalar = device->scalar.substr(0, device->scalar.find(':'));
  return config;
}

std::optional<std::string> first_binding_difference(const ConfigNode& was, const ConfigNode& now) {
  return first_config_difference(binding_part(was), binding_part(now));
}

}  // namespace svqa
