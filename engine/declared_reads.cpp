#include "engine/declared_reads.h"

#include <algorithm>
#include <stdexcept>
#include <type_traits>

namespace svqa {
namespace {

constexpr const char* kRuntime = "runtime.";

const RegistryBase* registry_of(const RegistrySections& registries, const std::string& section) {
  for (const auto& [name, registry] : registries)
    if (name == section) return registry;
  return nullptr;
}

bool runtime_field(const std::string& name) {
  bool known = false;
  RuntimeOptions::each_field([&](const char* field, auto) { known = known || name == field; });
  return known;
}

// "runtime.device, dtype, threads, seed"
std::string runtime_fields() {
  std::string out;
  RuntimeOptions::each_field([&](const char* field, auto) { out += out.empty() ? kRuntime + std::string(field) : std::string(", ") + field; });
  return out;
}

bool declared(const std::vector<std::string>& reads, const char* field) {
  return std::find(reads.begin(), reads.end(), kRuntime + std::string(field)) != reads.end();
}

}  // namespace

std::vector<std::string> declared_reads(const ExperimentConfig& cfg, const RegistrySections& registries,
                                        const std::vector<std::string>& sections) {
  std::vector<std::string> out;
  for (const auto& section : sections) {
    const ComponentChoice* choice = cfg.component(section);
    const RegistryBase* registry = registry_of(registries, section);
    const RegistryEntryInfo* info = choice && registry ? registry->find_info(choice->type) : nullptr;
    if (!info) continue;
    for (const auto& leaf : info->reads) {
      if (leaf.rfind(kRuntime, 0) != 0 || !runtime_field(leaf.substr(8)))
        throw std::logic_error(registry->kind() + " '" + info->name + "' declares it reads '" + leaf +
                               "': only runtime leaves (" + runtime_fields() + ") can be declared");
      if (std::find(out.begin(), out.end(), leaf) == out.end()) out.push_back(leaf);
    }
  }
  return out;
}

RuntimeOptions declared_runtime(const RuntimeOptions& runtime, const std::vector<std::string>& reads) {
  RuntimeOptions out;
  RuntimeOptions::each_field([&](const char* field, auto member) {
    if (declared(reads, field)) out.*member = runtime.*member;
  });
  return out;
}

RuntimeOptions runtime_for(const ExperimentConfig& cfg, const RegistrySections& registries, const std::string& section) {
  return declared_runtime(cfg.header.runtime, declared_reads(cfg, registries, {section}));
}

std::vector<std::pair<std::string, std::string>> declared_values(const RuntimeOptions& runtime,
                                                                 const std::vector<std::string>& reads) {
  std::vector<std::pair<std::string, std::string>> out;
  RuntimeOptions::each_field([&](const char* field, auto member) {
    using M = std::decay_t<decltype(runtime.*member)>;
    if (!declared(reads, field)) return;
    if constexpr (std::is_same_v<M, std::string>)
      out.emplace_back(kRuntime + std::string(field), runtime.*member);
    else
      out.emplace_back(kRuntime + std::string(field), ValueReader<M>::yaml(runtime.*member));
  });
  return out;
}

}  // namespace svqa
