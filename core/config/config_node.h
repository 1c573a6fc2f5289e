#pragma once
// A YAML document as a plain tree that remembers where every value came from, so that
// errors found after `_base_` merging and `--set` overrides still name file:line:column.

#include <string>
#include <string_view>
#include <vector>

#include "core/config/config_error.h"

namespace svqa {

struct ConfigEntry;

class ConfigNode {
 public:
  enum class Kind { Null, Scalar, Map, Sequence };

  Kind kind = Kind::Null;
  std::string scalar;                // Kind::Scalar
  bool quoted = false;               // a quoted scalar is always a string, never a number
  std::vector<ConfigEntry> entries;  // Kind::Map, in document order
  std::vector<ConfigNode> items;     // Kind::Sequence
  SourceLoc loc;

  static ConfigNode map(SourceLoc loc);
  bool is_map() const { return kind == Kind::Map; }
  bool is_scalar() const { return kind == Kind::Scalar; }
  bool is_sequence() const { return kind == Kind::Sequence; }
  bool is_null() const { return kind == Kind::Null; }

  const ConfigNode* find(std::string_view key) const;
  ConfigNode* find(std::string_view key);
  const ConfigEntry* find_entry(std::string_view key) const;
  bool erase(std::string_view key);
  std::vector<std::string> keys() const;

  // How a value is shown in "got ..." messages: "ten" for a scalar, "a mapping", ...
  std::string describe() const;
};

struct ConfigEntry {
  std::string key;
  SourceLoc key_loc;
  ConfigNode value;
};

// Parses one YAML file (no `_base_` handling). Empty file → empty map.
ConfigNode parse_yaml_file(const std::string& path);
// Parses YAML text; `origin` names it in locations ("--set a.b=1").
ConfigNode parse_yaml_text(const std::string& text, const std::string& origin);

// Block-style YAML of the tree, keys in stored order.
std::string to_yaml(const ConfigNode& node);

}  // namespace svqa
