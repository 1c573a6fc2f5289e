#pragma once
// What a backbone or an encoding strategy computes depends on its own section and on the runtime
// leaves its registration declares (RegistryBase::declare_reads): runtime.device, dtype and
// threads for a backbone, runtime.seed for an encoder that draws random numbers. Those leaves are
// all a factory is given (the others at their defaults), and the memory cache's key holds their
// values (engine/snapshot/snapshot_key.h): a snapshot is replayed only where every leaf its
// memory could depend on is equal, and a leaf left undeclared cannot change the memory.

#include <string>
#include <utility>
#include <vector>

#include "core/config/experiment.h"
#include "engine/registries.h"

namespace svqa {

// The runtime.* leaves the choices of `sections` declare, each once, in declaration order. Throws
// std::logic_error naming the entry when one declares a leaf that is not a field of runtime:
// (the other sections either key a snapshot whole or are never read while encoding).
std::vector<std::string> declared_reads(const ExperimentConfig& cfg, const RegistrySections& registries,
                                        const std::vector<std::string>& sections);

// `runtime` with only the `reads` leaves kept, every other field at its default: what the
// factory of a component declaring `reads` is given.
RuntimeOptions declared_runtime(const RuntimeOptions& runtime, const std::vector<std::string>& reads);
// The runtime `section`'s choice is built with.
RuntimeOptions runtime_for(const ExperimentConfig& cfg, const RegistrySections& registries, const std::string& section);

// (leaf, value) of each of `reads`, from `runtime`: a string as it is, a number as YAML writes it.
std::vector<std::pair<std::string, std::string>> declared_values(const RuntimeOptions& runtime,
                                                                 const std::vector<std::string>& reads);

}  // namespace svqa
