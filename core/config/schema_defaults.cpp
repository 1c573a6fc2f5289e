#include "core/config/schema_defaults.h"

#include <algorithm>

namespace svqa {

ConfigNode with_defaults(const ConfigNode* set, const std::vector<FieldInfo>& fields) {
  ConfigNode out = ConfigNode::map(set ? set->loc : SourceLoc{});
  for (const auto& f : fields) {
    const ConfigEntry* given = set && set->is_map() ? set->find_entry(f.name) : nullptr;
    if (!f.fields.empty()) {  // a nested section: completed whether or not it was given
      out.entries.push_back({f.name, given ? given->key_loc : out.loc, with_defaults(given ? &given->value : nullptr, f.fields)});
    } else if (given) {
      out.entries.push_back(*given);
    } else if (!f.required) {  // a required key is there once validation passed
      out.entries.push_back({f.name, out.loc, parse_yaml_text(f.default_yaml, "the default of " + f.name)});
    }
  }
  if (set && set->is_map())
    for (const auto& e : set->entries)
      if (std::none_of(fields.begin(), fields.end(), [&](const FieldInfo& f) { return f.name == e.key; }))
        out.entries.push_back(e);
  return out;
}

}  // namespace svqa
