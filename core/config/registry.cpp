#include "core/config/registry.h"

namespace svqa {

void RegistryBase::add_info(RegistryEntryInfo info) {
  if (const RegistryEntryInfo* first = find_info(info.name))
    throw RegistryError(kind_ + " '" + info.name + "' is registered twice: first at " + first->registered_at.file +
                        ":" + std::to_string(first->registered_at.line) + ", again at " + info.registered_at.file +
                        ":" + std::to_string(info.registered_at.line) +
                        ". Give one of them another name, or remove the second registration.");
  infos_.push_back(std::move(info));
}

const RegistryEntryInfo* RegistryBase::find_info(const std::string& name) const {
  for (const auto& i : infos_)
    if (i.name == name) return &i;
  return nullptr;
}

std::vector<const RegistryEntryInfo*> RegistryBase::infos() const {
  std::vector<const RegistryEntryInfo*> out;
  for (const auto& i : infos_) out.push_back(&i);
  std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->name < b->name; });
  return out;
}

std::vector<std::string> RegistryBase::names() const {
  std::vector<std::string> out;
  for (const auto* i : infos()) out.push_back(i->name);
  return out;
}

void RegistryBase::declare_reads(const std::string& name, std::vector<std::string> leaves) {
  for (auto& i : infos_)
    if (i.name == name) {
      i.reads = std::move(leaves);
      return;
    }
  throw RegistryError(kind_ + " '" + name + "': declare_reads before it is registered");
}

void RegistryBase::retire(std::string name, std::string replacement, std::string why) {
  retired_.push_back({std::move(name), std::move(replacement), std::move(why)});
}

std::string RegistryBase::unknown_name_message(const std::string& name) const {
  for (const auto& r : retired_)
    if (r.name == name) return kind_ + " '" + name + "' was renamed '" + r.replacement + "': " + r.why;
  const std::vector<std::string> known = names();
  std::string list;
  for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
  return "unknown " + kind_ + " '" + name + "'" + did_you_mean(name, known) + "; known: " +
         (list.empty() ? "(none registered)" : list);
}

}  // namespace svqa
