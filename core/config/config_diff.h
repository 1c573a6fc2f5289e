#pragma once
// Where two config trees first differ, as a dotted key and both values: what a results folder
// says when it is asked to hold a run of another config.

#include <optional>
#include <string>

#include "core/config/config_node.h"

namespace svqa {

// nullopt when `was` and `now` hold the same keys and values (scalars compared as text, maps by
// key whatever their order, lists item by item); else "retrieval.options.retrieve_size: 8 there,
// 2 now" for the first difference in `now`'s key order (then keys only `was` has).
std::optional<std::string> first_config_difference(const ConfigNode& was, const ConfigNode& now);

}  // namespace svqa
