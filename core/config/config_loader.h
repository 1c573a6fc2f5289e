#pragma once
// Loading an experiment file: `_base_` inheritance, deep merge, `_delete_`, `--set` overrides.
//
//   # experiments/ablation.yaml
//   _base_: [../base/rekv.yaml]          # paths relative to this file, merged in order
//   retrieval:
//     options: {retrieve_size: 32}       # deep-merged into the base's retrieval.options
//   encoding:
//     _delete_: true                     # replace the base's whole encoding section
//     type: bank_recent

#include <string>
#include <vector>

#include "core/config/config_node.h"

namespace svqa {

// Reads `path` and everything it inherits; the result has no `_base_` or `_delete_` keys.
ConfigNode load_config(const std::string& path);

// `preset` without the keys that `path` (and what it inherits) deletes with `KEY: {_delete_: true}`,
// which load_config's tree of that file no longer shows: a grid's own keys, merged over each preset
// of its `_base_` axis, delete what they say (compare_methods.yaml: the Qwen presets' video_resize).
void erase_deleted_keys(ConfigNode& preset, const std::string& path);

// `over` merged onto `base`: maps merge key by key, anything else replaces; a map with
// `_delete_: true` replaces instead of merging.
ConfigNode merge_config(ConfigNode base, const ConfigNode& over);

// Applies one "a.b.c=value" override. The value is parsed as YAML (so `[1, 2]` is a list)
// and checked later against the schema like any value from a file.
void apply_override(ConfigNode& root, const std::string& assignment);
// Whether a dotted key is a component's type ("retrieval.type").
bool sets_component_type(const std::string& key);
// Applies every override, those that set a component's type (`retrieval.type=bank_recent`) first, so
// the `retrieval.options.*` overrides given with them apply on top of the new type's defaults in
// whatever order they were written.
void apply_overrides(ConfigNode& root, const std::vector<std::string>& assignments);

// Sets the value at a dotted key, creating sections on the way; errors name `origin`. Setting a
// component's type to another one (`retrieval.type`) drops that section's `options`: the new type
// starts from its own defaults. To replace a whole section give it whole: `retrieval={type: …, options: {…}}`.
void set_config_value(ConfigNode& root, const std::string& key, ConfigNode value, const std::string& origin);

}  // namespace svqa
