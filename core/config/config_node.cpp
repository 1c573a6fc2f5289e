#include "core/config/config_node.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

namespace svqa {

ConfigNode ConfigNode::map(SourceLoc loc) {
  ConfigNode n;
  n.kind = Kind::Map;
  n.loc = std::move(loc);
  return n;
}

const ConfigEntry* ConfigNode::find_entry(std::string_view key) const {
  for (const auto& e : entries)
    if (e.key == key) return &e;
  return nullptr;
}

const ConfigNode* ConfigNode::find(std::string_view key) const {
  const ConfigEntry* e = find_entry(key);
  return e ? &e->value : nullptr;
}

ConfigNode* ConfigNode::find(std::string_view key) {
  return const_cast<ConfigNode*>(static_cast<const ConfigNode*>(this)->find(key));
}

bool ConfigNode::erase(std::string_view key) {
  for (auto it = entries.begin(); it != entries.end(); ++it)
    if (it->key == key) {
      entries.erase(it);
      return true;
    }
  return false;
}

std::vector<std::string> ConfigNode::keys() const {
  std::vector<std::string> out;
  for (const auto& e : entries) out.push_back(e.key);
  return out;
}

std::string ConfigNode::describe() const {
  switch (kind) {
    case Kind::Null: return "null";
    case Kind::Scalar: return "\"" + scalar + "\"";
    case Kind::Map: return "a mapping";
    case Kind::Sequence: return "a list";
  }
  return "?";
}

static SourceLoc loc_of(const YAML::Mark& m, const std::string& origin) {
  if (m.line < 0) return {origin, 0, 0};
  return {origin, m.line + 1, m.column + 1};
}

namespace {

// yaml-cpp shares an aliased node instead of copying it; the tree here copies it at every alias, so
// nested aliases ("billion laughs") would grow exponentially. An alias's node has the anchor's mark:
// a mark seen before means a copy, and copies are bounded.
constexpr size_t kMaxAliasValues = 100000;

struct Converter {
  std::string origin;
  bool from_file;
  std::unordered_set<int> seen;  // Mark().pos of every node converted
  size_t alias_values = 0;

  ConfigNode convert(const YAML::Node& y, const std::string& path) {
    ConfigNode n;
    n.loc = from_file ? loc_of(y.Mark(), origin) : SourceLoc{origin, 0, 0};
    if (y.Mark().pos >= 0 && !seen.insert(y.Mark().pos).second && ++alias_values > kMaxAliasValues)
      throw ConfigError(n.loc, path, "aliases expand to more than " + std::to_string(kMaxAliasValues) +
                                         " values (a YAML alias bomb?)");
    switch (y.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        n.kind = ConfigNode::Kind::Null;
        break;
      case YAML::NodeType::Scalar:
        n.kind = ConfigNode::Kind::Scalar;
        n.scalar = y.Scalar();
        n.quoted = y.Tag() == "!";
        break;
      case YAML::NodeType::Sequence:
        n.kind = ConfigNode::Kind::Sequence;
        for (const auto& item : y) n.items.push_back(convert(item, path + "[" + std::to_string(n.items.size()) + "]"));
        break;
      case YAML::NodeType::Map: {
        n.kind = ConfigNode::Kind::Map;
        std::unordered_map<std::string, size_t> index;  // duplicate keys found in O(1), not by a scan
        for (const auto& kv : y) {
          SourceLoc key_loc = from_file ? loc_of(kv.first.Mark(), origin) : n.loc;
          if (!kv.first.IsScalar()) throw ConfigError(key_loc, path, "mapping keys must be plain names");
          const std::string key = kv.first.Scalar();
          const std::string key_path = path.empty() ? key : path + "." + key;
          if (const auto first = index.find(key); first != index.end())
            throw ConfigError(key_loc, key_path,
                              "duplicate key (first defined at " + n.entries[first->second].key_loc.str() + ")");
          index.emplace(key, n.entries.size());
          n.entries.push_back({key, key_loc, convert(kv.second, key_path)});
        }
        break;
      }
    }
    return n;
  }
};

}  // namespace

static ConfigNode parse(const std::string& text, const std::string& origin, bool from_file) {
  YAML::Node y;
  try {
    y = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw ConfigError(loc_of(e.mark, origin), "", "invalid YAML: " + e.msg);
  }
  ConfigNode n = Converter{origin, from_file, {}, 0}.convert(y, "");
  if (n.is_null() && from_file) return ConfigNode::map({origin, 1, 1});
  return n;
}

ConfigNode parse_yaml_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError({path, 0, 0}, "", "cannot open file");
  std::stringstream ss;
  ss << in.rdbuf();
  ConfigNode n = parse(ss.str(), path, /*from_file=*/true);
  if (!n.is_map()) throw ConfigError(n.loc, "", "expected a mapping at the top of the file, got " + n.describe());
  return n;
}

ConfigNode parse_yaml_text(const std::string& text, const std::string& origin) {
  return parse(text, origin, /*from_file=*/false);
}

static void emit(YAML::Emitter& out, const ConfigNode& n) {
  switch (n.kind) {
    case ConfigNode::Kind::Null: out << YAML::Null; break;
    case ConfigNode::Kind::Scalar:
      if (n.quoted) out << YAML::DoubleQuoted;
      out << n.scalar;
      break;
    case ConfigNode::Kind::Sequence:
      out << YAML::BeginSeq;
      for (const auto& i : n.items) emit(out, i);
      out << YAML::EndSeq;
      break;
    case ConfigNode::Kind::Map:
      out << YAML::BeginMap;
      for (const auto& e : n.entries) {
        out << YAML::Key << e.key << YAML::Value;
        emit(out, e.value);
      }
      out << YAML::EndMap;
      break;
  }
}

std::string to_yaml(const ConfigNode& node) {
  YAML::Emitter out;
  emit(out, node);
  return std::string(out.c_str()) + "\n";
}

}  // namespace svqa
