// Registries: explicit registration, duplicate names, unknown names with suggestions.

#include <catch2/catch.hpp>

#include <algorithm>

#include "app/cli/builtin_registries.h"
#include "engine/declared_reads.h"
#include "engine/strategy.h"
#include "tests/test_registries.h"

namespace svqa {

namespace {
struct Widget {
  explicit Widget(int64_t s) : size(s) {}
  int64_t size;
};
struct WidgetOptions {
  int64_t size = 3;
  static void declare(Schema<WidgetOptions>& s) { s.field("size", &WidgetOptions::size, "widget size").min(1); }
};
}  // namespace

TEST_CASE("a registered factory builds its product from validated options", "[registry]") {
  Registry<Widget> reg("widget");
  reg.add<WidgetOptions>("box", "a box", [](const WidgetOptions& o) { return std::make_unique<Widget>(o.size); },
                         SVQA_HERE);
  ErrorList errors;
  ConfigNode options = parse_yaml_text("{size: 9}", "test");
  std::any parsed = reg.find_info("box")->options->parse_any(&options, "widget.options", errors);
  REQUIRE(errors.empty());
  CHECK(reg.create("box", parsed)->size == 9);
  CHECK(reg.names() == std::vector<std::string>{"box"});
}

TEST_CASE("a strategy's factory may take the runtime options; one that does not still registers", "[registry]") {
  Registry<Widget, const RuntimeOptions&> reg("widget");
  reg.add<WidgetOptions>("seeded", "sized by the runtime's seed",
                         [](const WidgetOptions& o, const RuntimeOptions& r) {
                           return std::make_unique<Widget>(o.size * 1000 + r.seed);
                         },
                         SVQA_HERE);
  reg.add<WidgetOptions>("plain", "sized by its options",
                         [](const WidgetOptions& o) { return std::make_unique<Widget>(o.size); }, SVQA_HERE);
  RuntimeOptions runtime;
  runtime.seed = 7;
  CHECK(reg.create("seeded", std::any(WidgetOptions{}), runtime)->size == 3007);
  CHECK(reg.create("plain", std::any(WidgetOptions{}), runtime)->size == 3);
  // The built-in strategy registries pass the experiment's runtime to the strategies they build.
  const Registries builtin = builtin_registries();
  ErrorList errors;
  const std::any defaults = builtin.encoding.find_info("rekv_sliding_window")->options->parse_any(nullptr, "encoding.options", errors);
  REQUIRE(errors.empty());
  CHECK(builtin.encoding.create("rekv_sliding_window", defaults, runtime) != nullptr);
}

TEST_CASE("a component is given only the runtime leaves its registration declares", "[registry][snapshot]") {
  Registry<Widget, const RuntimeOptions&> reg("widget");
  reg.add<WidgetOptions>("seeded", "sized by the runtime's seed",
                         [](const WidgetOptions& o, const RuntimeOptions& r) {
                           return std::make_unique<Widget>(o.size * 1000 + r.seed);
                         },
                         SVQA_HERE);
  reg.declare_reads("seeded", {"runtime.seed"});
  CHECK(reg.find_info("seeded")->reads == std::vector<std::string>{"runtime.seed"});
  CHECK_THROWS_AS(reg.declare_reads("nameless", {"runtime.seed"}), RegistryError);
  RuntimeOptions runtime;
  runtime.seed = 7, runtime.threads = 3, runtime.device = "cuda:1";
  const RuntimeOptions seen = declared_runtime(runtime, {"runtime.seed"});
  CHECK(seen.seed == 7);
  CHECK(seen.threads == 0);  // undeclared: its default, so it cannot change what the component computes
  CHECK(seen.device == "cpu");
  CHECK(declared_values(runtime, {"runtime.device", "runtime.seed"}) ==
        std::vector<std::pair<std::string, std::string>>{{"runtime.device", "cuda:1"}, {"runtime.seed", "7"}});
  // RuntimeOptions::each_field names every field its schema declares, in the same order.
  std::vector<std::string> fields, visited;
  for (const auto& f : Schema<RuntimeOptions>().fields()) fields.push_back(f.name);
  RuntimeOptions::each_field([&](const char* name, auto) { visited.push_back(name); });
  CHECK(visited == fields);

  // The built-in declarations: every one a runtime leaf; StreamingTOM's seed, the backbone's device, dtype, threads.
  const Registries builtin = builtin_registries();
  ExperimentConfig cfg;
  for (const auto& [section, registry] : builtin.sections())
    for (const auto* info : registry->infos()) {
      INFO(section << " " << info->name);
      cfg.components[section] = {info->name, {}};
      CHECK_NOTHROW(declared_reads(cfg, builtin.sections(), {section}));
    }
  cfg.components["encoding"] = {"streamingtom", {}};
  cfg.components["backbone"] = {"torchscript", {}};
  CHECK(declared_reads(cfg, builtin.sections(), {"backbone", "encoding"}) ==
        std::vector<std::string>{"runtime.device", "runtime.dtype", "runtime.threads", "runtime.seed"});
  cfg.components["encoding"] = {"rekv_sliding_window", {}};
  CHECK(declared_reads(cfg, builtin.sections(), {"encoding"}).empty());
  Registry<Widget, const RuntimeOptions&> odd("encoding strategy");
  odd.add<WidgetOptions>("peeking", "reads a retrieval option", [](const WidgetOptions& o) { return std::make_unique<Widget>(o.size); },
                         SVQA_HERE);
  odd.declare_reads("peeking", {"retrieval.options.k"});
  cfg.components["encoding"] = {"peeking", {}};
  const RegistrySections odd_sections{{"encoding", &odd}};
  CHECK_THROWS_WITH(declared_reads(cfg, odd_sections, {"encoding"}),
                    "encoding strategy 'peeking' declares it reads 'retrieval.options.k': only runtime leaves "
                    "(runtime.device, dtype, threads, seed) can be declared");
}

TEST_CASE("registering a name twice names both places", "[registry]") {
  Registry<Widget> reg("widget");
  auto make = [](const WidgetOptions& o) { return std::make_unique<Widget>(o.size); };
  reg.add<WidgetOptions>("box", "first", make, SourceLoc{"strategies/a.cpp", 10, 0});
  try {
    reg.add<WidgetOptions>("box", "second", make, SourceLoc{"strategies/b.cpp", 20, 0});
    FAIL("expected RegistryError");
  } catch (const RegistryError& e) {
    CHECK(std::string(e.what()) ==
          "widget 'box' is registered twice: first at strategies/a.cpp:10, again at strategies/b.cpp:20. "
          "Give one of them another name, or remove the second registration.");
  }
}

TEST_CASE("SVQA_HERE records the registering file relative to the repo", "[registry]") {
  Registry<Widget> reg("widget");
  reg.add<WidgetOptions>("box", "a box", [](const WidgetOptions& o) { return std::make_unique<Widget>(o.size); },
                         SVQA_HERE);
  CHECK(reg.find_info("box")->registered_at.file == "tests/test_registry.cpp");
}

TEST_CASE("an unknown name lists the known ones and the closest match", "[registry]") {
  const test::TestRegistries reg;
  CHECK(reg.retrieval.unknown_name_message("extrenal") ==
        "unknown retrieval strategy 'extrenal' (did you mean 'external'?); known: external, internal");
  CHECK(reg.retrieval.unknown_name_message("zzz") == "unknown retrieval strategy 'zzz'; known: external, internal");
  CHECK_THROWS_WITH(reg.retrieval.create("zzz", std::any{}),
                    "unknown retrieval strategy 'zzz'; known: external, internal");
}

TEST_CASE("built-in registries hold at least what the issues built so far", "[registry]") {
  // "Contains", not equality: a new strategy or benchmark adds its name without editing this test.
  const Registries reg = builtin_registries();
  auto holds = [](const std::vector<std::string>& names, std::initializer_list<const char*> want) {
    for (const char* name : want) {
      INFO(name);
      CHECK(std::find(names.begin(), names.end(), name) != names.end());
    }
  };
  holds(reg.backbone.names(), {"torchscript"});
  holds(reg.encoding.names(), {"fresh_frames", "mukv_multigrain", "rekv_sliding_window", "streamkv_segments"});
  // The in-bank baselines' old names are refused with the new name, not taken as aliases.
  for (const auto& [old_name, new_name] : {std::pair{"uniform", "bank_uniform"}, std::pair{"recent", "bank_recent"}}) {
    const std::string line = reg.retrieval.unknown_name_message(old_name);
    CHECK(line.rfind(std::string("retrieval strategy '") + old_name + "' was renamed '" + new_name + "': ", 0) == 0);
    CHECK(line.find("fresh_frames") != std::string::npos);
    CHECK_THROWS_WITH(reg.retrieval.create(old_name, std::any{}, RuntimeOptions{}), line);
  }
  holds(reg.retrieval.names(), {"bank_recent", "bank_uniform", "external", "full_context", "internal",
                                "mukv_semi_hierarchical", "streamkv_layer_adaptive"});
  holds(reg.benchmark.names(), {"cgbench", "egoschema", "lvbench", "mlvu", "rvs_ego", "rvs_movie", "stream_list",
                                "streamingbench", "videomme"});
}

}  // namespace svqa
