#pragma once
// An experiment file resolved and validated against the schemas: what `svqa validate` checks
// and `svqa run` executes.
//
//   name: demo
//   runtime: {device: cpu, dtype: float32, threads: 2}
//   backbone:  {type: <registered backbone>, options: {...}}
//   encoding:  {type: <registered encoding strategy>, options: {...}}
//   retrieval: {type: <registered retrieval strategy>, options: {...}}
//   benchmark: {type: <registered benchmark>, options: {...}}
//   output: {dir: results}

#include <any>
#include <map>
#include <string>
#include <vector>

#include "core/config_node.h"
#include "core/registry.h"
#include "core/runtime.h"

namespace svqa {

struct OutputOptions {
  std::string dir = "results";
  static void declare(Schema<OutputOptions>& s) {
    s.field("dir", &OutputOptions::dir, "root directory of result folders (svqa run --out overrides it)");
  }
};

// The scalar part of an experiment; component sections are validated through the registries.
struct ExperimentHeader {
  std::string name;
  std::string description;
  RuntimeOptions runtime;
  OutputOptions output;
  static void declare(Schema<ExperimentHeader>& s) {
    s.field("name", &ExperimentHeader::name, "experiment name; defaults to the file name without .yaml");
    s.field("description", &ExperimentHeader::description, "free text shown in reports");
    s.field("runtime", &ExperimentHeader::runtime, "device, dtype, threads, seed");
    s.field("output", &ExperimentHeader::output, "where results go");
  }
};

struct ComponentChoice {
  std::string type;     // registered name
  std::any options;     // the entry's options struct, validated
};

struct ExperimentConfig {
  ExperimentHeader header;
  std::map<std::string, ComponentChoice> components;  // by section: backbone, encoding, ...
  ConfigNode resolved;                                // after _base_, merge and --set
  const ComponentChoice* component(const std::string& section) const;
};

// load_config + overrides + validation; throws ConfigError listing every problem.
ExperimentConfig resolve_experiment(const std::string& path, const std::vector<std::string>& overrides,
                                    const RegistrySections& registries);

// Validates an already-merged tree (`origin` names the file for the default experiment name).
ExperimentConfig validate_experiment(ConfigNode root, const std::string& origin, const RegistrySections& registries);

}  // namespace svqa
