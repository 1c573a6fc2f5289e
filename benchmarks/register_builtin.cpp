#include "core/registries.h"

namespace svqa {

// Every built-in benchmark, one line each: registry.add<Options>(name, description, factory, SVQA_HERE).
void register_builtin_benchmarks(Registry<Benchmark>& registry) { (void)registry; }

}  // namespace svqa
