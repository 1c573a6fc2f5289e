#pragma once
// The keys of a resolved experiment that cannot change an answer: how fast or where a run goes, or
// what it is called and compared with. A run folder's answers stay valid when only these change, so
// they do not block a resume (app/run/run_folder.h); every other key, defaults included, does.
//
//   runtime.threads; runtime.device's index (cuda:0 and cuda:1 are one device kind; cpu vs cuda is not);
//   output.dir; stream.ram_budget_mb, stream.spill_dir (spilled blocks come back bit for bit);
//   memory.* (a snapshot replays the memory the run would encode); judge.timeout_s, max_attempts,
//   backoff_s, api_key_env, cache (how the judge is reached, not which judge); description, label, expected.

#include <optional>
#include <string>
#include <vector>

#include "core/config/config_node.h"

namespace svqa {

// The dotted keys above ("runtime.threads", "memory", ...): a key names its whole section.
const std::vector<std::string>& run_time_only_keys();

// `config` less the run-time-only keys, runtime.device reduced to its kind ("cuda:1" -> "cuda").
ConfigNode binding_part(ConfigNode config);

// first_config_difference over the binding parts: where two configs differ in a key that can change
// an answer (nullopt when only run-time-only keys differ).
std::optional<std::string> first_binding_difference(const ConfigNode& was, const ConfigNode& now);

}  // namespace svqa
