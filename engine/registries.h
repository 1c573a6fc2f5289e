#pragma once
// The four registries an experiment composes, one per YAML section.

#include <any>
#include <string>
#include <utility>
#include <vector>

#include "core/config/registry.h"
#include "core/config/runtime.h"
#include "engine/memory_contract.h"

namespace svqa {

class Backbone;
class EncodingStrategy;
class RetrievalStrategy;
class Benchmark;  // engine/benchmark.h
struct ExperimentConfig;  // core/config/experiment.h

struct Registries {
  // Installs the rules an encoder's declaration is checked by (engine/memory_contract.h): a retrieval
  // strategy must fit its blocks, and stream.context_window_s, memory.cache and stream.kv_codec what
  // it does to memory. Each registers an EncoderProvides (with its EncoderTraits) or RetrievalNeeds.
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

// What encoder `type` with `options` declares it does to memory (engine/memory_contract.h): what the run
// reads in place of asking the strategy object. Defaults for an entry that declares nothing.
EncoderTraits encoder_traits(const RegistryBase& encoding, const std::string& type, const std::any& options);
// The experiment's encoder's traits.
EncoderTraits encoder_traits(const ExperimentConfig& cfg, const RegistrySections& registries);
// Whether the experiment's streams can be saved and replayed as memory snapshots (its encoder's memory
// appends, its K/V are uncoded): svqa grid gives a shared memory.cache only to such runs.
bool memory_snapshots_fit(const ExperimentConfig& cfg, const RegistrySections& registries);

}  // namespace svqa
