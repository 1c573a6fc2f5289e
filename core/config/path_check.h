#pragma once
// The paths an experiment names (fields declared `.must_exist(...)`: exports, annotations, video
// roots, external experts) checked before anything loads, so a missing one is one line naming its key,
// not a model load failing later or every question turned into an error record.

#include <vector>

#include "core/config/config_error.h"
#include "core/config/experiment.h"

namespace svqa {

// Every path field of `cfg.complete` that is set and is not what it must be, each as a line
// "file:line:col: backbone.options.export: exports/x: no such directory (...)"; none: ok.
std::vector<std::string> missing_paths(const ExperimentConfig& cfg, const RegistrySections& registries);

// Throws ConfigError with every line of missing_paths.
void require_paths(const ExperimentConfig& cfg, const RegistrySections& registries);

}  // namespace svqa
