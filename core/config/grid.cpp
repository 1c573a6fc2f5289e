#include "core/config/grid.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
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

// The axis whose values are files each run starts from (a method's preset), under the file itself.
constexpr const char* kBaseAxis = "_base_";

// Run config = preset `value` (relative to the grid file), with the grid file's own settings over it.
ConfigNode over_preset(const ConfigNode& value, const ConfigNode& own, const std::string& origin, size_t index) {
  const std::string at = std::string("grid.axes.") + kBaseAxis + "[" + std::to_string(index) + "]";
  if (!value.is_scalar()) throw ConfigError(value.loc, at, "expected the path of a YAML file, got " + value.describe());
  const std::filesystem::path path = (std::filesystem::path(origin).parent_path() / value.scalar).lexically_normal();
  if (!std::filesystem::is_regular_file(path))
    throw ConfigError(value.loc, at, "file not found: '" + value.scalar + "' (looked for " + path.string() + ")");
  ConfigNode preset = load_config(path.string());
  erase_deleted_keys(preset, origin);
  return merge_config(std::move(preset), own);
}

// One value of an axis: what is set, and how run names show it.
struct AxisValue {
  ConfigNode value;
  std::string shown;
  bool labelled = false;
  std::string yaml;  // `value` written out, to compare values (set once it is final)
};

struct Axis {
  std::string key;   // the dotted key it sets
  std::string name;  // how run names show the key: its shortest dotted suffix no other axis has
  std::vector<AxisValue> values;
};

std::string suffix(const std::string& key, size_t segments) {
  size_t at = key.size();
  for (size_t i = 0; i < segments && at != std::string::npos && at > 0; ++i) at = key.rfind('.', at - 1);
  return at == std::string::npos ? key : key.substr(at + 1);
}

// A section's leaves as (dotted key, text): "options.retrieve_size" → "8"; a list is one leaf ("1+2").
using Leaves = std::vector<std::pair<std::string, std::string>>;  // in document order

void flatten(const ConfigNode& node, const std::string& prefix, Leaves& out) {
  if (node.is_map()) {
    for (const auto& e : node.entries) flatten(e.value, prefix.empty() ? e.key : prefix + "." + e.key, out);
  } else if (node.is_sequence()) {
    std::string text;
    for (const auto& item : node.items) text += (text.empty() ? "" : "+") + (item.is_scalar() ? item.scalar : "…");
    out.push_back({prefix, text});
  } else {
    out.push_back({prefix, node.scalar});
  }
}

// Unlabelled sections shown alike by their type get the options in which they differ from one
// another ("internal-retrieve_size=4", "internal-retrieve_size=8"), so a run's name shows its values.
void show_differing_options(std::vector<AxisValue>& values) {
  std::map<std::string, std::vector<size_t>> by_shown;
  for (size_t i = 0; i < values.size(); ++i)
    if (!values[i].labelled && values[i].value.is_map()) by_shown[values[i].shown].push_back(i);
  for (const auto& [shown, group] : by_shown) {
    if (group.size() < 2) continue;
    std::vector<Leaves> leaves(group.size());
    std::vector<std::string> keys;  // every leaf's key, first seen first
    for (size_t g = 0; g < group.size(); ++g) {
      flatten(values[group[g]].value, "", leaves[g]);
      for (const auto& [k, _] : leaves[g])
        if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    }
    const auto value_of = [&](size_t g, const std::string& key) -> const std::string* {
      const auto it = std::find_if(leaves[g].begin(), leaves[g].end(), [&](const auto& l) { return l.first == key; });
      return it == leaves[g].end() ? nullptr : &it->second;
    };
    for (const auto& key : keys) {
      if (key == "type") continue;
      bool differs = false;
      for (size_t g = 1; g < group.size(); ++g) {
        const std::string *a = value_of(g, key), *b = value_of(0, key);
        differs = differs || (a == nullptr) != (b == nullptr) || (a && *a != *b);
      }
      if (!differs) continue;
      const std::string name = key.rfind("options.", 0) == 0 ? key.substr(8) : key;
      for (size_t g = 0; g < group.size(); ++g)
        if (const std::string* v = value_of(g, key)) values[group[g]].shown += "-" + safe_path_component(name + "=" + *v);
    }
  }
}

// The values of axis `a`: `{label: NAME, value: V}` unwrapped; unlabelled values shown as a scalar,
// a section by its `type` (and the options that tell it from others of its type), else their
// position. Two different values never show the same text (a repeated text gets "#index"); the
// same value twice on a zip axis shows the same text. Labels are unique, and the same value twice
// is an error where it would give two identical runs (`distinct`: a product grid; a zip grid
// checks whole tuples instead).
Axis read_axis(const ConfigEntry& a, bool distinct) {
  Axis axis{a.key, a.key, {}};
  const std::string path = "grid.axes." + a.key;
  for (size_t i = 0; i < a.value.items.size(); ++i) {
    const ConfigNode& item = a.value.items[i];
    const std::string at = path + "[" + std::to_string(i) + "]";
    AxisValue v{item, "", false, ""};
    if (item.is_map() && item.find("label")) {
      const ConfigNode* label = item.find("label");
      const ConfigNode* value = item.find("value");
      if (!value || item.entries.size() != 2)
        throw ConfigError(item.loc, at, "a labelled value is {label: NAME, value: VALUE}, got keys " + [&] {
          std::string k;
          for (const auto& e : item.entries) k += (k.empty() ? "" : ", ") + e.key;
          return k;
        }());
      if (!label->is_scalar() || label->scalar.empty() ||
          label->scalar.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.+-") !=
              std::string::npos)
        throw ConfigError(label->loc, at + ".label",
                          "expected a name of letters, digits and _ . + - (it names the run's directory), got " +
                              label->describe());
      v = {*value, label->scalar, true, ""};
    } else if (item.is_scalar() && a.key == kBaseAxis) {  // a preset file: the run is named by its stem
      v = {item, safe_path_component(std::filesystem::path(item.scalar).stem().string()), true, ""};
    } else if (item.is_scalar()) {  // a safe path component ("a/../../x" → "a_.._.._x"): the folder stays in the grid's
      v.shown = safe_path_component(item.scalar);
    } else if (const ConfigNode* type = item.is_map() ? item.find("type") : nullptr; type && type->is_scalar()) {
      v.shown = safe_path_component(type->scalar);
    } else {
      v.shown = "#" + std::to_string(i);
    }
    v.yaml = to_yaml(v.value);
    for (size_t j = 0; j < axis.values.size(); ++j) {
      if (distinct && axis.values[j].yaml == v.yaml)
        throw ConfigError(item.loc, at, "the same value as " + path + "[" + std::to_string(j) + "]: its runs would be identical");
      if (v.labelled && axis.values[j].labelled && axis.values[j].shown == v.shown)
        throw ConfigError(item.loc, at + ".label", "'" + v.shown + "' labels " + path + "[" + std::to_string(j) + "] already");
    }
    axis.values.push_back(std::move(v));
  }
  show_differing_options(axis.values);
  std::vector<bool> alike(axis.values.size(), false);  // different unlabelled values that look alike: told apart by position
  for (size_t i = 0; i < axis.values.size(); ++i)
    for (size_t j = 0; j < axis.values.size(); ++j)
      alike[i] = alike[i] || (j != i && !axis.values[i].labelled && axis.values[j].shown == axis.values[i].shown &&
                              axis.values[j].yaml != axis.values[i].yaml);
  for (size_t i = 0; i < axis.values.size(); ++i)
    if (alike[i]) axis.values[i].shown += "#" + std::to_string(i);
  return axis;
}

// Each axis named by the shortest dotted suffix of its key that no other axis ends with.
void name_axes(std::vector<Axis>& axes) {
  for (auto& a : axes)
    for (size_t n = 1;; ++n) {
      a.name = suffix(a.key, n);
      const bool unique = std::none_of(axes.begin(), axes.end(), [&](const Axis& b) {
        return &b != &a && suffix(b.key, n) == a.name;
      });
      if (unique || a.name == a.key) break;
    }
}

// The grid section checked: its keys, `mode` (product or zip) and that every axis is a non-empty list.
std::string read_grid_mode(const ConfigNode& grid) {
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
  return mode;
}

// Bounded before any run is built: ten axes of ten values would be 10^10 runs.
void check_run_count(const ConfigNode& axes, const std::string& mode) {
  size_t run_count = mode == "zip" ? axes.entries.front().value.items.size() : 1;
  for (const auto& a : axes.entries) {
    if (mode == "product") run_count = std::min(run_count * a.value.items.size(), kMaxGridRuns + 1);
    if (run_count > kMaxGridRuns)
      throw ConfigError(axes.loc, "grid.axes",
                        "more than " + std::to_string(kMaxGridRuns) + " runs; split the grid into several files");
  }
}

// Index tuples (one value index per axis) of a zip grid: the i-th value of every axis, for each i.
std::vector<std::vector<size_t>> zip_combinations(const ConfigNode& axes, const std::vector<Axis>& axis_list) {
  std::vector<std::vector<size_t>> combos;
  const size_t n = axes.entries.front().value.items.size();
  for (const auto& a : axes.entries)
    if (a.value.items.size() != n)
      throw ConfigError(a.value.loc, "grid.axes." + a.key,
                        "zip needs axes of equal length: " + std::to_string(a.value.items.size()) + " values, the first axis has " +
                            std::to_string(n));
  for (size_t i = 0; i < n; ++i) combos.push_back(std::vector<size_t>(axes.entries.size(), i));
  // A value may repeat on one axis (ReKV's encoder beside several retrievals), a whole tuple may not.
  std::map<std::vector<std::string>, size_t> first_with;  // tuple of values → its first index
  for (size_t j = 0; j < n; ++j) {
    std::vector<std::string> tuple;
    for (const auto& a : axis_list) tuple.push_back(a.values[j].yaml);
    const auto [it, added] = first_with.emplace(std::move(tuple), j);
    if (!added) {
      const auto& first = axes.entries.front();
      throw ConfigError(first.value.items[j].loc, "grid.axes." + first.key + "[" + std::to_string(j) + "]",
                        "zip: the same values as [" + std::to_string(it->second) + "] on every axis: its runs would be identical");
    }
  }
  return combos;
}

// Index tuples of a product grid: every value of each axis with every value of the others.
std::vector<std::vector<size_t>> product_combinations(const std::vector<Axis>& axis_list) {
  std::vector<std::vector<size_t>> combos{{}};
  for (const auto& a : axis_list) {
    std::vector<std::vector<size_t>> next;
    for (const auto& c : combos)
      for (size_t i = 0; i < a.values.size(); ++i) {
        next.push_back(c);
        next.back().push_back(i);
      }
    combos = std::move(next);
  }
  return combos;
}

// The run of one index tuple: `root` with each axis's value set, named by the values it shows.
GridRun grid_run(const ConfigNode& root, const std::string& base_name, const std::string& origin,
                 const std::vector<Axis>& axis_list, const std::vector<size_t>& combo) {
  GridRun run;
  run.config = root;
  run.name = base_name;
  // A preset first (the file's own keys over it), then axes that set a component's type: the
  // others' options then apply on top of its defaults.
  for (size_t k = 0; k < combo.size(); ++k)
    if (axis_list[k].key == kBaseAxis) run.config = over_preset(axis_list[k].values[combo[k]].value, run.config, origin, combo[k]);
  for (const bool types : {true, false})
    for (size_t k = 0; k < combo.size(); ++k) {
      const auto& axis = axis_list[k];
      if (axis.key == kBaseAxis) continue;
      if (sets_component_type(axis.key) == types)
        set_config_value(run.config, axis.key, axis.values[combo[k]].value, origin + ": grid.axes." + axis.key);
    }
  for (size_t k = 0; k < combo.size(); ++k) {
    const auto& v = axis_list[k].values[combo[k]];
    run.settings.push_back({axis_list[k].key, v.shown});
    run.name += "__" + (v.labelled ? v.shown : axis_list[k].name + "=" + v.shown);  // a label stands for itself
  }
  ConfigNode name_node;
  name_node.kind = ConfigNode::Kind::Scalar;
  name_node.scalar = run.name;
  name_node.quoted = true;
  set_config_value(run.config, "name", name_node, origin);
  run.hash = fnv1a_hex(to_yaml(run.config));
  return run;
}

}  // namespace

bool has_grid(const ConfigNode& root) { return root.find("grid") != nullptr; }

std::vector<GridRun> expand_grid(ConfigNode root, const std::string& origin) {
  std::string base_name = std::filesystem::path(origin).stem().string();
  if (const ConfigNode* n = root.find("name"); n && n->is_scalar()) base_name = n->scalar;
  root.erase("slurm");  // where the runs go (svqa submit), not what they compute: kept out of their folders' hash
  const ConfigNode* grid_ptr = root.find("grid");
  if (!grid_ptr) {
    GridRun run{base_name, {}, root, fnv1a_hex(to_yaml(root))};
    return {run};
  }
  const ConfigNode grid = *grid_ptr;
  root.erase("grid");
  const std::string mode = read_grid_mode(grid);
  const ConfigNode& axes = *grid.find("axes");

  std::vector<Axis> axis_list;
  for (const auto& a : axes.entries) axis_list.push_back(read_axis(a, mode == "product"));
  name_axes(axis_list);
  check_run_count(axes, mode);
  const auto combos = mode == "zip" ? zip_combinations(axes, axis_list) : product_combinations(axis_list);
  std::vector<GridRun> runs;
  for (const auto& combo : combos) runs.push_back(grid_run(root, base_name, origin, axis_list, combo));
  return runs;
}

// Digits only, the whole text ("0/2/3", " 1/2", "1/2x", "+1/2" are refused), at most 9 of them.
static bool read_count(const std::string& text, int64_t& out) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos) return false;
  out = std::stoll(text);
  return true;
}

std::pair<int64_t, int64_t> parse_shard(const std::string& text) {
  const size_t slash = text.find('/');
  int64_t i = 0, n = 0;
  if (slash != std::string::npos && read_count(text.substr(0, slash), i) && read_count(text.substr(slash + 1), n) &&
      n > 0 && i < n)
    return {i, n};
  throw std::invalid_argument("--shard '" + text + "': expected i/N with 0 <= i < N, e.g. 0/4 (Slurm: $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT)");
}

}  // namespace svqa
