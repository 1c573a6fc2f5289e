#pragma once
// Registries filled with small test components, so config validation is tested
// independently of which real strategies exist.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/config/registry.h"

namespace svqa::test {

struct WindowOptions {
  int64_t n_local = 15000;
  int64_t chunk_frames = 1;
  std::string position = "contiguous";
  static void declare(Schema<WindowOptions>& s) {
    s.field("n_local", &WindowOptions::n_local, "tokens in the local window").min(1);
    s.field("chunk_frames", &WindowOptions::chunk_frames, "frames prefilled per chunk").min(1);
    s.field("position", &WindowOptions::position, "position policy").one_of({"contiguous", "original"});
    s.check("chunk_frames", [](const WindowOptions& o) {  // a cross-field rule, as real strategies declare them
      return o.chunk_frames <= o.n_local ? std::string()
                                         : "must be at most n_local (" + std::to_string(o.n_local) + "): a chunk fits in the window";
    });
  }
};

struct TopKOptions {
  int64_t top_k = 64;
  int64_t retrieve_size = 64;
  double temperature = 1.0;
  double mix = 0.5;
  bool cosine = false;
  std::vector<double> weights = {0.5, 0.5};
  static void declare(Schema<TopKOptions>& s) {
    s.field("top_k", &TopKOptions::top_k, "blocks kept").min(1);
    s.field("retrieve_size", &TopKOptions::retrieve_size, "blocks retrieved per layer").min(1);
    s.field("temperature", &TopKOptions::temperature, "softmax temperature").min(0);
    s.field("mix", &TopKOptions::mix, "mixing weight").min(0).max(1);
    s.field("cosine", &TopKOptions::cosine, "cosine instead of dot product");
    s.field("weights", &TopKOptions::weights, "fusion weights");
  }
};

struct ExportOptions {
  std::string export_dir;
  static void declare(Schema<ExportOptions>& s) {
    s.field("export", &ExportOptions::export_dir, "exported model directory").required();
  }
};

struct NoOptions {
  static void declare(Schema<NoOptions>&) {}
};

// What the test factories build; validation never calls them.
struct Component {
  std::string name;
};

template <class Options>
auto make(const char* name) {
  return [name](const Options&) { return std::make_unique<Component>(Component{name}); };
}

// The same four sections as the built-in Registries, with test entries.
struct TestRegistries {
  Registry<Component> backbone{"backbone"};
  Registry<Component> encoding{"encoding strategy"};
  Registry<Component> retrieval{"retrieval strategy"};
  Registry<Component> benchmark{"benchmark"};

  TestRegistries() {
    backbone.add<ExportOptions>("torchscript", "test backbone", make<ExportOptions>("torchscript"), SVQA_HERE);
    encoding.add<WindowOptions>("sliding_window", "test encoder", make<WindowOptions>("sliding_window"), SVQA_HERE);
    retrieval.add<TopKOptions>("internal", "test retrieval", make<TopKOptions>("internal"), SVQA_HERE);
    retrieval.add<TopKOptions>("external", "test retrieval", make<TopKOptions>("external"), SVQA_HERE);
    benchmark.add<NoOptions>("streamingbench", "test benchmark", make<NoOptions>("streamingbench"), SVQA_HERE);
  }
  TestRegistries(const TestRegistries&) = delete;

  RegistrySections sections() const {
    return {{"backbone", &backbone}, {"encoding", &encoding}, {"retrieval", &retrieval}, {"benchmark", &benchmark}};
  }
};

}  // namespace svqa::test
