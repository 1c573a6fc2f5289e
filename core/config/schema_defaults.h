#pragma once
// The fully resolved tree of an options section: every field its schema declares, with the value a run
// uses. What `svqa validate --dump` prints and a run folder's config.yaml records, so that a default
// changed in a later svqa shows as a changed config, not as the same one.

#include <vector>

#include "core/config/config_node.h"
#include "core/config/schema.h"

namespace svqa {

// `set` (may be null: nothing set) with each field it leaves out added at its default, nested sections
// completed the same way; in the schema's field order, then any key the schema does not declare as set.
ConfigNode with_defaults(const ConfigNode* set, const std::vector<FieldInfo>& fields);

}  // namespace svqa
