#pragma once
// The four registries an experiment composes, one per YAML section.

#include <string>
#include <utility>
#include <vector>

#include "core/config/registry.h"
#include "core/config/runtime.h"

namespace svqa {

class Backbone;
class EncodingStrategy;
class RetrievalStrategy;
class Benchmark;  // engine/benchmark.h

struct Registries {
  // Installs the rule that a retrieval strategy must fit its encoder (engine/memory_contract.h):
  // each registers an EncoderProvides or RetrievalNeeds contract.
  Registries();

  Registry<Backbone, const RuntimeOptions&> backbone{"backbone"};  // built on the runtime's device and dtype
  // Strategies may see the runtime (seed, device, dtype): a factory taking (options, const RuntimeOptions&) gets it.
  Registry<EncodingStrategy, const RuntimeOptions&> encoding{"encoding strategy"};
  Registry<RetrievalStrategy, const RuntimeOptions&> retrieval{"retrieval strategy"};
  Registry<Benchmark> benchmark{"benchmark"};

  RegistrySections sections() const {
    return {{"backbone", &backbone}, {"encoding", &encoding}, {"retrieval", &retrieval}, {"benchmark", &benchmark}};
  }
};

}  // namespace svqa
