#include "core/config/config_diff.h"

namespace svqa {
namespace {

std::string shown(const ConfigNode* n) {
  if (!n) return "not set";
  if (n->is_scalar()) return n->scalar.empty() ? "\"\"" : n->scalar;
  if (n->is_sequence()) return "a list of " + std::to_string(n->items.size());
  return n->describe();
}

std::string joined(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

std::optional<std::string> differ(const ConfigNode* was, const ConfigNode* now, const std::string& path) {
  const auto report = [&] { return (path.empty() ? "(top level)" : path) + ": " + shown(was) + " there, " + shown(now) + " now"; };
  if (!was || !now || was->kind != now->kind) return report();
  switch (now->kind) {
    case ConfigNode::Kind::Null: return std::nullopt;
    case ConfigNode::Kind::Scalar: return was->scalar == now->scalar ? std::nullopt : std::optional<std::string>(report());
    case ConfigNode::Kind::Sequence:
      if (was->items.size() != now->items.size()) return report();
      for (size_t i = 0; i < now->items.size(); ++i)
        if (auto d = differ(&was->items[i], &now->items[i], path + "[" + std::to_string(i) + "]")) return d;
      return std::nullopt;
    case ConfigNode::Kind::Map:
      for (const auto& e : now->entries)
        if (auto d = differ(was->find(e.key), &e.value, joined(path, e.key))) return d;
      for (const auto& e : was->entries)
        if (!now->find(e.key)) return differ(&e.value, nullptr, joined(path, e.key));
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> first_config_difference(const ConfigNode& was, const ConfigNode& now) {
  return differ(&was, &now, "");
}

}  // namespace svqa
