#include "core/config/config_loader.h"

#include <algorithm>
#include <filesystem>
#include <unordered_map>

namespace svqa {
namespace fs = std::filesystem;

static constexpr const char* kBase = "_base_";
static constexpr const char* kDelete = "_delete_";

// True if the map carries `_delete_: true`; rejects any other value.
static bool takes_delete(const ConfigNode& map) {
  const ConfigNode* d = map.find(kDelete);
  if (!d) return false;
  if (d->is_scalar() && !d->quoted && (d->scalar == "true" || d->scalar == "false")) return d->scalar == "true";
  throw ConfigError(d->loc, kDelete, "expected true or false, got " + d->describe());
}

// Removes every `_delete_`, checking the value of those that had nothing to replace.
static void strip_delete(ConfigNode& n) {
  if (n.is_map()) {
    takes_delete(n);
    n.erase(kDelete);
  }
  for (auto& e : n.entries) strip_delete(e.value);
  for (auto& i : n.items) strip_delete(i);
}

// A component given another type starts from that type's defaults: the old type's options (from a
// base file or the files before --set) would be merged into the new one's otherwise.
static void drop_options_of_old_type(ConfigNode& section, const ConfigNode& new_type) {
  const ConfigNode* old = section.find("type");
  if (old && old->is_scalar() && !(new_type.is_scalar() && new_type.scalar == old->scalar)) section.erase("options");
}

ConfigNode merge_config(ConfigNode base, const ConfigNode& over) {
  if (!base.is_map() || !over.is_map() || takes_delete(over)) return over;
  if (const ConfigNode* type = over.find("type")) drop_options_of_old_type(base, *type);
  // An index of base's keys keeps merging linear in the number of keys (a scan per key is quadratic).
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < base.entries.size(); ++i) index.emplace(base.entries[i].key, i);
  for (const auto& e : over.entries) {
    if (const auto it = index.find(e.key); it != index.end()) {
      ConfigNode& existing = base.entries[it->second].value;
      existing = merge_config(std::move(existing), e.value);
    } else {
      index.emplace(e.key, base.entries.size());
      base.entries.push_back(e);
    }
  }
  base.loc = over.loc;
  return base;
}

static std::vector<const ConfigNode*> base_paths(const ConfigNode& bases) {
  std::vector<const ConfigNode*> out;
  if (bases.is_scalar()) out.push_back(&bases);
  for (const auto& item : bases.items) {
    if (!item.is_scalar()) throw ConfigError(item.loc, kBase, "expected a file path, got " + item.describe());
    out.push_back(&item);
  }
  if (out.empty()) throw ConfigError(bases.loc, kBase, "expected a file path or a list of them, got " + bases.describe());
  return out;
}

static ConfigNode load_with_bases(const fs::path& path, std::vector<fs::path>& chain) {
  ConfigNode node = parse_yaml_file(path.string());
  ConfigNode merged = ConfigNode::map(node.loc);
  if (const ConfigEntry* bases = node.find_entry(kBase)) {
    for (const ConfigNode* b : base_paths(bases->value)) {
      fs::path base = (path.parent_path() / b->scalar).lexically_normal();
      if (!fs::exists(base))
        throw ConfigError(b->loc, kBase, "file not found: '" + b->scalar + "' (looked for " + base.string() + ")");
      if (fs::is_directory(base))  // it would read as an empty file and be merged as nothing
        throw ConfigError(b->loc, kBase, "'" + b->scalar + "' is a directory (" + base.string() + "), expected a YAML file");
      fs::path canonical = fs::canonical(base);
      for (const auto& seen : chain)
        if (seen == canonical) {
          std::string cycle;
          for (const auto& c : chain) cycle += c.filename().string() + " -> ";
          throw ConfigError(b->loc, kBase, "cyclic inheritance: " + cycle + canonical.filename().string());
        }
      chain.push_back(canonical);
      merged = merge_config(std::move(merged), load_with_bases(base, chain));
      chain.pop_back();
    }
    node.erase(kBase);
  }
  return merge_config(std::move(merged), node);
}

ConfigNode load_config(const std::string& path) {
  if (!fs::exists(path)) throw ConfigError({path, 0, 0}, "", "file not found");
  if (fs::is_directory(path)) throw ConfigError({path, 0, 0}, "", "is a directory, expected a YAML file");
  std::vector<fs::path> chain{fs::canonical(path)};
  ConfigNode root = load_with_bases(fs::path(path), chain);
  strip_delete(root);
  return root;
}

static void erase_deleted(ConfigNode& target, const ConfigNode& raw) {
  if (!target.is_map() || !raw.is_map()) return;
  for (const auto& e : raw.entries) {
    if (!e.value.is_map()) continue;
    if (takes_delete(e.value)) {
      target.erase(e.key);
    } else if (ConfigNode* inner = target.find(e.key)) {
      erase_deleted(*inner, e.value);
    }
  }
}

void erase_deleted_keys(ConfigNode& preset, const std::string& path) {
  std::vector<fs::path> chain{fs::canonical(path)};
  erase_deleted(preset, load_with_bases(fs::path(path), chain));
}

void set_config_value(ConfigNode& root, const std::string& key, ConfigNode value, const std::string& origin) {
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    size_t dot = key.find('.', start);
    parts.push_back(key.substr(start, dot - start));
    if (parts.back().empty()) throw ConfigError({origin, 0, 0}, key, "empty key segment");
    if (dot == std::string::npos) break;
    start = dot + 1;
  }

  ConfigNode* node = &root;
  std::string path;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    path += (path.empty() ? "" : ".") + parts[i];
    ConfigNode* child = node->find(parts[i]);
    if (!child) {
      // New sections are allowed; the schema decides later whether the key exists.
      node->entries.push_back({parts[i], {origin, 0, 0}, ConfigNode::map({origin, 0, 0})});
      child = &node->entries.back().value;
    } else if (!child->is_map()) {
      throw ConfigError({origin, 0, 0}, path, "is " + child->describe() + ", not a section with keys");
    }
    node = child;
  }
  if (sets_component_type(key)) drop_options_of_old_type(*node, value);
  if (ConfigNode* existing = node->find(parts.back()))
    *existing = std::move(value);
  else
    node->entries.push_back({parts.back(), {origin, 0, 0}, std::move(value)});
}

bool sets_component_type(const std::string& key) {
  return std::count(key.begin(), key.end(), '.') == 1 && key.size() > 5 && key.compare(key.size() - 5, 5, ".type") == 0;
}

void apply_overrides(ConfigNode& root, const std::vector<std::string>& assignments) {
  auto sets_type = [](const std::string& a) { return sets_component_type(a.substr(0, a.find('='))); };
  for (const auto& a : assignments)
    if (sets_type(a)) apply_override(root, a);
  for (const auto& a : assignments)
    if (!sets_type(a)) apply_override(root, a);
}

// A `#` after a blank (or at a line's start) starts a YAML comment there; a comment is exactly what can be cut off without
// changing the value (inside a quoted scalar the cut leaves the quote open).
static bool comment_starts_at(const std::string& text, size_t hash, const ConfigNode& whole, const std::string& origin) {
  if (hash > 0 && std::string(" \t\r\n").find(text[hash - 1]) == std::string::npos) return false;
  try {
    return to_yaml(parse_yaml_text(text.substr(0, hash), origin)) == to_yaml(whole);
  } catch (const ConfigError&) {
    return false;
  }
}

// A --set value read as YAML; a command line holds no comments, so a value YAML would cut at ` #`
// (`--set name="run #2"`) is taken whole, as a string.
static ConfigNode parse_set_value(const std::string& text, const std::string& origin) {
  ConfigNode value = parse_yaml_text(text, origin);
  for (size_t hash = text.find('#'); hash != std::string::npos; hash = text.find('#', hash + 1)) {
    if (!comment_starts_at(text, hash, value, origin)) continue;
    ConfigNode whole;
    whole.kind = ConfigNode::Kind::Scalar;
    whole.scalar = text;
    whole.quoted = true;
    whole.loc = value.loc;
    return whole;
  }
  return value;
}

void apply_override(ConfigNode& root, const std::string& assignment) {
  const std::string origin = "--set " + assignment;
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ConfigError({origin, 0, 0}, "", "expected KEY=VALUE with a dotted KEY, e.g. retrieval.options.retrieve_size=32");
  set_config_value(root, assignment.substr(0, eq), parse_set_value(assignment.substr(eq + 1), origin), origin);
}

}  // namespace svqa
