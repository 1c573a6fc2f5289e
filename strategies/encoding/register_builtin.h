#pragma once
// The built-in encoding strategies, registered by app/cli/builtin_registries.cpp.

#include <any>
#include <string>

#include "core/config/registry.h"
#include "core/config/runtime.h"
#include "engine/memory_contract.h"

namespace svqa {

class EncodingStrategy;

void register_builtin_encoders(Registry<EncodingStrategy, const RuntimeOptions&>& registry);

// What built-in encoder `name` with `options` (its options struct) declares it does to memory: for
// code that builds a strategy by hand (tests, benchmarks/speed) and answers from it.
EncoderTraits builtin_encoder_traits(const std::string& name, const std::any& options);

}  // namespace svqa
