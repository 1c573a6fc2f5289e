#include "core/config/config_node.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

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

static ConfigNode convert(const YAML::Node& y, const std::string& origin, bool from_file, const std::string& path) {
  ConfigNode n;
  n.loc = from_file ? loc_of(y.Mark(), origin) : SourceLoc{origin, 0, 0};
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
      for (const auto& item : y)
        n.items.push_back(convert(item, origin, from_file, path + "[" + std::to_string(n.items.size()) + "]"));
      break;
    case YAML::NodeType::Map:
      n.kind = ConfigNode::Kind::Map;
      for (const auto& kv : y) {
        SourceLoc key_loc = from_file ? loc_of(kv.first.Mark(), origin) : n.loc;
        if (!kv.first.IsScalar()) throw ConfigError(key_loc, path, "mapping keys must be plain names");
        const std::string key = kv.first.Scalar();
        const std::string key_path = path.empty() ? key : path + "." + key;
        if (const ConfigEntry* first = n.find_entry(key))
          throw ConfigError(key_loc, key_path, "duplicate key (first defined at " + first->key_loc.str() + ")");
        n.entries.push_back({key, key_loc, convert(kv.second, origin, from_file, key_path)});
      }
      break;
  }
  return n;
}

static ConfigNode parse(const std::string& text, const std::string& origin, bool from_file) {
  YAML::Node y;
  try {
    y = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw ConfigError(loc_of(e.mark, origin), "", "invalid YAML: " + e.msg);
  }
  ConfigNode n = convert(y, origin, from_file, "");
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
