#pragma once
// Every top-level key an experiment file may hold besides its components' sections, as `svqa list`
// shows them: the header's (name, stream, runtime, ...), then `grid:` (expanded by core/config/grid.h)
// and `slurm:` (read by svqa submit, core/config/slurm_options.h), which the header schema leaves out.

#include <vector>

#include "core/config/schema.h"

namespace svqa {

std::vector<FieldInfo> experiment_key_fields();

}  // namespace svqa
