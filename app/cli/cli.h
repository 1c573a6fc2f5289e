#pragma once
// The `svqa` command line. Exit codes: 0 success, 2 usage or config error, 1 runtime failure.

#include "engine/registries.h"

namespace svqa {

int run_cli(int argc, const char* const* argv, const Registries& registries);

}  // namespace svqa
