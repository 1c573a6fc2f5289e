#pragma once
// The built-in benchmarks, registered by app/cli/builtin_registries.cpp.

#include "core/config/registry.h"

namespace svqa {

class Benchmark;

void register_builtin_benchmarks(Registry<Benchmark>& registry);

}  // namespace svqa
