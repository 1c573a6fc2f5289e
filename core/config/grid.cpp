#include "core/config/grid.h"

#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "core/config/config_loader.h"
#include "core/config/schema.h"
#include "core/io/safe_paths.h"

namespace svqa {
namespace {

std::string fnv1a_hex(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (const unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return std::string(buf, 12);
}

// How a value appears in a run name: a scalar as itself, a section by its `type`, else its position;
// made a safe path component ("a/../../x" → "a_.._.._x"): the run's folder stays inside the grid's.
std::string shown(const ConfigNode& v, size_t index) {
  if (v.is_scalar()) return safe_path_component(v.scalar);
  if (v.is_map())
    if (const ConfigNode* type = v.find("type"); type && type->is_scalar()) return safe_path_component(type->scalar);
  return "#" + std::to_string(index);
}

std::string last_segment(const std::string& key) { return key.substr(key.rfind('.') + 1); }

}  // namespace

bool has_grid(const ConfigNode& root) { return root.find("grid") != nullptr; }

std::vector<GridRun> expand_grid(ConfigNode root, const std::string& origin) {
  std::string base_name = std::filesystem::path(origin).stem().string();
  if (const ConfigNode* n = root.find("name"); n && n->is_scalar()) base_name = n->scalar;
  const ConfigNode* grid_ptr = root.find("grid");
  if (!grid_ptr) {
    GridRun run{base_name, {}, root, fnv1a_hex(to_yaml(root))};
    return {run};
  }
  const ConfigNode grid = *grid_ptr;
  root.erase("grid");
  ErrorList errors;
  if (!grid.is_map()) throw ConfigError(grid.loc, "grid", "expected a section with 'axes' (and optionally 'mode')");
  check_known_keys(grid, "grid", {"mode", "axes"}, errors);
  errors.throw_if_any();
  std::string mode = "product";
  if (const ConfigNode* m = grid.find("mode")) {
    if (!m->is_scalar() || (m->scalar != "product" && m->scalar != "zip"))
      throw ConfigError(m->loc, "grid.mode", "expected product or zip, got " + m->describe());
    mode = m->scalar;
  }
  const ConfigNode* axes = grid.find("axes");
  if (!axes || !axes->is_map() || axes->entries.empty())
    throw ConfigError(axes ? axes->loc : grid.loc, "grid.axes", "expected a map of dotted keys to lists of values");
  for (const auto& a : axes->entries)
    if (!a.value.is_sequence() || a.value.items.empty())
      throw ConfigError(a.value.loc, "grid.axes." + a.key, "expected a non-empty list of values, got " + a.value.describe());

  // Index tuples: one value index per axis.
  std::vector<std::vector<size_t>> combos;
  if (mode == "zip") {
    const size_t n = axes->entries.front().value.items.size();
    for (const auto& a : axes->entries)
      if (a.value.items.size() != n)
        throw ConfigError(a.value.loc, "grid.axes." + a.key,
                          "zip needs axes of equal length: " + std::to_string(a.value.items.size()) + " values, the first axis has " +
                              std::to_string(n));
    for (size_t i = 0; i < n; ++i) combos.push_back(std::vector<size_t>(axes->entries.size(), i));
  } else {
    combos.push_back({});
    for (const auto& a : axes->entries) {
      std::vector<std::vector<size_t>> next;
      for (const auto& c : combos)
        for (size_t i = 0; i < a.value.items.size(); ++i) {
          next.push_back(c);
          next.back().push_back(i);
        }
      combos = std::move(next);
    }
  }

  std::vector<GridRun> runs;
  for (const auto& combo : combos) {
    GridRun run;
    run.config = root;
    run.name = base_name;
    for (size_t k = 0; k < combo.size(); ++k) {
      const auto& axis = axes->entries[k];
      const ConfigNode& value = axis.value.items[combo[k]];
      set_config_value(run.config, axis.key, value, origin + ": grid.axes." + axis.key);
      run.settings.push_back({axis.key, shown(value, combo[k])});
      run.name += "__" + last_segment(axis.key) + "=" + shown(value, combo[k]);
    }
    ConfigNode name_node;
    name_node.kind = ConfigNode::Kind::Scalar;
    name_node.scalar = run.name;
    name_node.quoted = true;
    set_config_value(run.config, "name", name_node, origin);
    run.hash = fnv1a_hex(to_yaml(run.config));
    runs.push_back(std::move(run));
  }
  return runs;
}

std::pair<int64_t, int64_t> parse_shard(const std::string& text) {
  const size_t slash = text.find('/');
  try {
    if (slash != std::string::npos) {
      const int64_t i = std::stoll(text.substr(0, slash)), n = std::stoll(text.substr(slash + 1));
      if (n > 0 && i >= 0 && i < n) return {i, n};
    }
  } catch (const std::exception&) {
  }
  throw std::invalid_argument("--shard '" + text + "': expected i/N with 0 <= i < N, e.g. 0/4 (Slurm: $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT)");
}

}  // namespace svqa
