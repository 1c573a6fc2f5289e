#pragma once
// The built-in retrieval strategies, registered by app/cli/builtin_registries.cpp.

#include "core/config/registry.h"
#include "core/config/runtime.h"

namespace svqa {

class RetrievalStrategy;

void register_builtin_retrievers(Registry<RetrievalStrategy, const RuntimeOptions&>& registry);

}  // namespace svqa
