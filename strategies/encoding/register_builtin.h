#pragma once
// The built-in encoding strategies, registered by app/cli/builtin_registries.cpp.

#include "core/config/registry.h"
#include "core/config/runtime.h"

namespace svqa {

class EncodingStrategy;

void register_builtin_encoders(Registry<EncodingStrategy, const RuntimeOptions&>& registry);

}  // namespace svqa
