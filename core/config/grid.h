#pragma once
// Experiment grids: a `grid:` section whose axes are any dotted keys, crossed or zipped.
//
//   _base_: demo.yaml
//   grid:
//     mode: product                          # or zip (axes of equal length, taken together)
//     axes:
//       retrieval.options.retrieve_size: [4, 8]
//       retrieval: [{type: internal}, {type: bank_recent, options: {retrieve_size: 8}}]
//       retrieval.options.lambda: [{label: lam5, value: 0.5}, {label: lam9, value: 0.9}]
//
// An axis `_base_` lists files (relative to this one, e.g. method presets): each run starts from
// one of them, with the file's own keys merged over it, and is named by the file's stem.
// Each run is the file without `grid:`, with one value per axis set (a whole section replaces
// the base's). Its name lists the settings: `key=value` (the key's shortest dotted suffix no other
// axis has; a section shown by its type), or a value's label alone; two runs never get the same
// name. Its results directory is keyed by a hash of its resolved config, so changing anything
// gives a new directory and a rerun resumes the old one.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/config/config_node.h"

namespace svqa {

// Runs one grid may expand to: a product of axes grows fast, and every run is validated up front.
inline constexpr size_t kMaxGridRuns = 10000;

struct GridRun {
  std::string name;                                          // "<experiment>__retrieve_size=4__retrieval=bank_recent__lam5"
  std::vector<std::pair<std::string, std::string>> settings;  // (dotted key, value shown: its label if it has one)
  ConfigNode config;                                         // resolved, without `grid:`, `name` set
  std::string hash;                                          // 12 hex digits of FNV-1a over the config's YAML
  std::string directory() const { return name + "-" + hash; }
};

bool has_grid(const ConfigNode& root);

// Expands the grid of an already loaded file (`origin` names it in errors). A file without
// `grid:` is one run. Throws ConfigError for a malformed grid.
std::vector<GridRun> expand_grid(ConfigNode root, const std::string& origin);

// "i/N" → (i, N) with 0 <= i < N; throws std::invalid_argument otherwise.
std::pair<int64_t, int64_t> parse_shard(const std::string& text);

}  // namespace svqa
