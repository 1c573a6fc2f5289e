#pragma once
// `svqa submit EXP --status`: what became of the last submission of an experiment, from Slurm's
// squeue/sacct and the run folders: each array task done, running, pending or failed (with the
// last line of its log), and the dependent merge job.

#include <string>
#include <vector>

#include "core/config/experiment.h"
#include "core/config/grid.h"
#include "engine/registries.h"

namespace svqa {

// Where `svqa submit` keeps a grid's scripts, logs and submitted.json: GRID_DIR/slurm.
inline std::string slurm_folder(const std::string& grid_dir) { return grid_dir + "/slurm"; }

// Prints the status; returns 3 while a task or the merge job is pending or running, else 1 when
// one failed, else 0 (all done).
int print_submit_status(const std::string& grid_dir, const std::vector<GridRun>& runs,
                        const std::vector<ExperimentConfig>& configs, const Registries& registries);

}  // namespace svqa
