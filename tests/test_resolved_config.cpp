// The fully resolved experiment (defaults included) that --dump prints and a run folder records, and
// the resume check over it: a default changed since a folder's answers refuses the resume naming the
// key; run-time-only keys (threads, a device's index, ...) do not.

#include <catch2/catch.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/config/config_loader.h"
#include "core/config/experiment.h"
#include "core/config/run_time_keys.h"
#include "app/run/run_folder.h"
#include "tests/test_registries.h"

namespace svqa {
namespace {

namespace fs = std::filesystem;

const std::string kChild = "tests/fixtures/config/good/child.yaml";

// The test encoder as a later svqa might declare it: the same options, n_local's default changed.
struct ChangedWindowOptions {
  int64_t n_local = 20000;
  int64_t chunk_frames = 1;
  std::string position = "contiguous";
  static void declare(Schema<ChangedWindowOptions>& s) {
    s.field("n_local", &ChangedWindowOptions::n_local, "tokens in the local window").min(1);
    s.field("chunk_frames", &ChangedWindowOptions::chunk_frames, "frames prefilled per chunk").min(1);
    s.field("position", &ChangedWindowOptions::position, "position policy").one_of({"contiguous", "original"});
  }
};

fs::path fresh_folder(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("svqa_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string scalar_at(const ConfigNode& root, const std::string& section, const std::string& key) {
  const ConfigNode* s = root.find(section);
  const ConfigNode* v = s ? s->find(key) : nullptr;
  return v && v->is_scalar() ? v->scalar : "(absent)";
}

}  // namespace

TEST_CASE("the complete config holds every default, the set one only what the files set", "[config][resolved]") {
  const test::TestRegistries registries;
  const std::string yaml = "name: plain\nencoding: {type: sliding_window}\n";
  const fs::path file = fresh_folder("complete") / "plain.yaml";
  std::ofstream(file) << yaml;
  const ExperimentConfig cfg = resolve_experiment(file.string(), {}, registries.sections());
  CHECK(scalar_at(cfg.complete, "stream", "fps") == "0.5");
  CHECK(scalar_at(cfg.complete, "runtime", "threads") == "0");
  CHECK(scalar_at(*cfg.complete.find("encoding"), "options", "n_local") == "15000");
  CHECK(cfg.resolved.find("stream") == nullptr);  // --dump=set: what the file sets
  // The complete tree validates again to the same tree (what `svqa report` reads back from config.yaml).
  std::ofstream(file) << to_yaml(cfg.complete);
  CHECK(to_yaml(resolve_experiment(file.string(), {}, registries.sections()).complete) == to_yaml(cfg.complete));
}

TEST_CASE("a default changed since a folder's answers refuses the resume, naming the key", "[config][resolved]") {
  const test::TestRegistries before;
  test::TestRegistries after;  // the same, but for the encoder whose n_local default changed
  Registry<test::Component> changed{"encoding strategy"};
  changed.add<ChangedWindowOptions>("sliding_window", "test encoder", test::make<ChangedWindowOptions>("sliding_window"),
                                    SVQA_HERE);
  RegistrySections later = after.sections();
  for (auto& [section, registry] : later)
    if (section == "encoding") registry = &changed;
  const fs::path dir = fresh_folder("changed_default");
  const fs::path file = dir / "exp.yaml";
  std::ofstream(file) << "name: exp\nencoding: {type: sliding_window, options: {chunk_frames: 2}}\n";

  const ExperimentConfig made = resolve_experiment(file.string(), {}, before.sections());
  { const RunFolder folder(dir.string(), made.complete, "test"); }
  std::ofstream(dir / "predictions.jsonl") << "{\"question_id\": \"q1\"}\n";  // answered

  const ExperimentConfig now = resolve_experiment(file.string(), {}, later);
  CHECK_THROWS_WITH(RunFolder(dir.string(), now.complete, "test"),
                    Catch::Contains("(encoding.options.n_local: 15000 there, 20000 now)"));
  // Run-time-only keys resume, and config.yaml then records this session's values.
  const ExperimentConfig faster =
      resolve_experiment(file.string(), {"runtime.threads=3", "output.dir=elsewhere", "label=ReKV"}, before.sections());
  CHECK_NOTHROW(RunFolder(dir.string(), faster.complete, "test"));
  CHECK(scalar_at(parse_yaml_file((dir / "config.yaml").string()), "runtime", "threads") == "3");
  // A changed seed is an answer-changing key.
  const ExperimentConfig seeded = resolve_experiment(file.string(), {"runtime.seed=1"}, before.sections());
  CHECK_THROWS_WITH(RunFolder(dir.string(), seeded.complete, "test"), Catch::Contains("runtime.seed: 0 there, 1 now"));
  fs::remove_all(dir);
}

TEST_CASE("a device's index is run-time only, its kind is not", "[config][resolved]") {
  const auto tree = [](const std::string& device) {
    return parse_yaml_text("runtime: {device: \"" + device + "\", threads: 2}\nmemory: {cache: x}\n", "test");
  };
  CHECK(!first_binding_difference(tree("cuda:0"), tree("cuda:1")));
  CHECK(first_binding_difference(tree("cpu"), tree("cuda")) == std::optional<std::string>("runtime.device: cpu there, cuda now"));
  CHECK(to_yaml(binding_part(tree("cuda:3"))) == "runtime:\n  device: \"cuda\"\n");
}

}  // namespace svqa
