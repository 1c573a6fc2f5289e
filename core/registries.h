#pragma once
// The four registries an experiment composes, one per YAML section.

#include <string>
#include <utility>
#include <vector>

#include "core/registry.h"

namespace svqa {

class Backbone;
class EncodingStrategy;
class RetrievalStrategy;
class Benchmark;

struct Registries {
  Registry<Backbone> backbone{"backbone"};
  Registry<EncodingStrategy> encoding{"encoding strategy"};
  Registry<RetrievalStrategy> retrieval{"retrieval strategy"};
  Registry<Benchmark> benchmark{"benchmark"};

  RegistrySections sections() const {
    return {{"backbone", &backbone}, {"encoding", &encoding}, {"retrieval", &retrieval}, {"benchmark", &benchmark}};
  }
};

// Every built-in component: the one place that calls each folder's register_builtin_*().
Registries builtin_registries();

// One registration list per folder (models/, strategies/encoding/, strategies/retrieval/, benchmarks/).
void register_builtin_backbones(Registry<Backbone>& registry);
void register_builtin_encoders(Registry<EncodingStrategy>& registry);
void register_builtin_retrievers(Registry<RetrievalStrategy>& registry);
void register_builtin_benchmarks(Registry<Benchmark>& registry);

}  // namespace svqa
