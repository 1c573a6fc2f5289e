#include "core/config/slurm_options.h"

namespace svqa {

SlurmOptions slurm_options(const ConfigNode& root) {
  ErrorList errors;
  SlurmOptions options = Schema<SlurmOptions>().parse(root.find("slurm"), "slurm", errors);
  errors.throw_if_any();
  return options;
}

}  // namespace svqa
