#pragma once
// The built-in backbones, registered by app/cli/builtin_registries.cpp.

#include "core/config/registry.h"
#include "core/config/runtime.h"

namespace svqa {

class Backbone;

void register_builtin_backbones(Registry<Backbone, const RuntimeOptions&>& registry);

}  // namespace svqa
