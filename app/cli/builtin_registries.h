#pragma once
// Every built-in component: the one place that calls each folder's register_builtin_*().

#include "engine/registries.h"

namespace svqa {

Registries builtin_registries();

}  // namespace svqa
