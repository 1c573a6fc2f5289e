#pragma once
// `svqa submit EXP --status`: what became of the last submission of an experiment, from Slurm's
// squeue/sacct and the run folders: each array task done, running, pending or failed (with the
// last line of its log), and the dependent merge job.

#include <string>
#include <vector>

#include "core/config/experiment.h"
#include "core/config/grid.h"
#include "core/engine/registries.h"

namespace svqa {

// Where `svqa submit` keeps a grid's scripts, logs and submitted.json: GRID_DIR/slurm.
inline std::string slurm_folder(const std::string& grid_dir) { return grid_dir + "/slurm"; }

// Prints the status; returns 0 when every task and the merge are done, 3 while any is pending or
// running, 1 when any failed.
int print_submit_status(const std::string& grid_dir, const std::vector<GridRun>& runs,
                        const std::vector<ExperimentConfig>& configs, const Registries& registries);

}  // namespace svqa
