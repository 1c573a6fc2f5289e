#include "core/config/experiment_keys.h"

#include "core/config/experiment.h"
#include "core/config/grid.h"
#include "core/config/slurm_options.h"

namespace svqa {
namespace {

FieldInfo section(const std::string& name, const std::string& doc, std::vector<FieldInfo> fields) {
  FieldInfo info;
  info.name = name;
  info.type = "section";
  info.doc = doc;
  info.fields = std::move(fields);
  return info;
}

// What expand_grid reads (core/config/grid.h): `mode` and `axes`.
FieldInfo grid_section() {
  FieldInfo mode;
  mode.name = "mode";
  mode.type = "string";
  mode.doc = "product: every combination of the axes' values; zip: the axes' i-th values together (equal lengths)";
  mode.default_yaml = "product";
  mode.choices = {"product", "zip"};
  FieldInfo axes;
  axes.name = "axes";
  axes.type = "map of dotted keys to lists of values";
  axes.doc = "each run sets one value per axis (a value may be {label: NAME, value: V}); the axis _base_ lists "
             "preset files; at most " + std::to_string(kMaxGridRuns) + " runs";
  axes.required = true;
  return section("grid", "runs of this file, each with one value per axis (svqa grid; docs/experiments.md)",
                 {mode, axes});
}

}  // namespace

std::vector<FieldInfo> experiment_key_fields() {
  std::vector<FieldInfo> fields = Schema<ExperimentHeader>().fields();
  fields.push_back(grid_section());
  fields.push_back(section("slurm", "what svqa submit asks Slurm for; not part of a run's config or folder",
                           Schema<SlurmOptions>().fields()));
  return fields;
}

}  // namespace svqa
