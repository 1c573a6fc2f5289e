#include "core/registries.h"

namespace svqa {

// Every built-in backbone, one line each: registry.add<Options>(name, description, factory, SVQA_HERE).
void register_builtin_backbones(Registry<Backbone>& registry) { (void)registry; }

}  // namespace svqa
