// Config loading: _base_ inheritance, merge, _delete_, --set overrides, strict validation.

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/config/config_loader.h"
#include "core/config/experiment.h"
#include "tests/test_registries.h"

namespace svqa {
namespace {

const std::string kGood = "tests/fixtures/config/good/";
const std::string kBroken = "tests/fixtures/config/broken/";

template <class T>
const T& options_of(const ExperimentConfig& cfg, const std::string& section) {
  REQUIRE(cfg.component(section) != nullptr);
  return std::any_cast<const T&>(cfg.component(section)->options);
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}

}  // namespace

TEST_CASE("_base_ files merge in order, deeply, and _delete_ replaces a subtree", "[config]") {
  const ExperimentConfig cfg = resolve_experiment(kGood + "child.yaml", {}, test::TestRegistries().sections());
  CHECK(cfg.header.name == "child");
  CHECK(cfg.header.runtime.threads == 2);  // from base.yaml
  CHECK(cfg.header.runtime.seed == 3);     // from base2.yaml

  const auto& enc = options_of<test::WindowOptions>(cfg, "encoding");
  CHECK(enc.n_local == 200);     // child overrides
  CHECK(enc.chunk_frames == 4);  // base survives the deep merge

  const auto& ret = options_of<test::TopKOptions>(cfg, "retrieval");
  CHECK(cfg.component("retrieval")->type == "external");
  CHECK(ret.retrieve_size == 5);
  CHECK(ret.top_k == 64);  // base's 8 and base2's 16 were deleted: the default is back
  CHECK(ret.weights == std::vector<double>{0.5, 0.5});

  // Directives never reach the resolved tree.
  const std::string dumped = to_yaml(cfg.resolved);
  CHECK(dumped.find("_base_") == std::string::npos);
  CHECK(dumped.find("_delete_") == std::string::npos);
}

TEST_CASE("the resolved dump reloads to the same experiment", "[config]") {
  const test::TestRegistries registries;
  const RegistrySections reg = registries.sections();
  const ExperimentConfig cfg = resolve_experiment(kGood + "child.yaml", {"retrieval.options.weights=[1, 2.5]"}, reg);
  const auto tmp = std::filesystem::temp_directory_path() / "svqa_resolved_roundtrip.yaml";
  std::ofstream(tmp) << to_yaml(cfg.resolved);
  const ExperimentConfig again = resolve_experiment(tmp.string(), {}, reg);
  CHECK(to_yaml(again.resolved) == to_yaml(cfg.resolved));
  CHECK(options_of<test::TopKOptions>(again, "retrieval").weights == std::vector<double>{1, 2.5});
}

TEST_CASE("overrides from --set are typed by the schema", "[config]") {
  const test::TestRegistries registries;
  const RegistrySections reg = registries.sections();
  const ExperimentConfig cfg = resolve_experiment(
      kGood + "child.yaml",
      {"runtime.threads=7", "retrieval.options.mix=0.25", "retrieval.options.cosine=true",
       "encoding.options.position=original", "name=123", "retrieval.options.weights=[0.2, 0.3, 0.5]",
       "benchmark.type=streamingbench"},
      reg);
  CHECK(cfg.header.runtime.threads == 7);
  CHECK(cfg.header.name == "123");  // a string field takes digits as text
  const auto& ret = options_of<test::TopKOptions>(cfg, "retrieval");
  CHECK(ret.mix == 0.25);
  CHECK(ret.cosine);
  CHECK(ret.weights == std::vector<double>{0.2, 0.3, 0.5});
  CHECK(options_of<test::WindowOptions>(cfg, "encoding").position == "original");
  CHECK(cfg.component("benchmark")->type == "streamingbench");  // a section --set created
  // Later overrides win over earlier ones.
  CHECK(resolve_experiment(kGood + "child.yaml", {"runtime.threads=1", "runtime.threads=9"}, reg)
            .header.runtime.threads == 9);
}

TEST_CASE("a --set value with ' #' is the whole value, not a value and a YAML comment", "[config]") {
  const test::TestRegistries registries;
  const RegistrySections reg = registries.sections();
  const auto name = [&](const std::string& assignment) {
    return resolve_experiment(kGood + "child.yaml", {assignment}, reg).header.name;
  };
  CHECK(name("name=a #b") == "a #b");  // YAML alone reads "a" and drops the rest
  CHECK(name("name=#b") == "#b");
  CHECK(name("name=a #b #c") == "a #b #c");
  CHECK(name("name='a #b'") == "a #b");  // quoted: YAML's own string, as before
  CHECK(name("name=a#b") == "a#b");      // no blank before '#': never a comment
  // A number with a "comment" is not silently the number: the schema sees the whole text.
  try {
    resolve_experiment(kGood + "child.yaml", {"runtime.threads=2 #x"}, reg);
    FAIL("accepted runtime.threads=2 #x");
  } catch (const ConfigError& e) {
    CHECK(e.lines().front().find("\"2 #x\"") != std::string::npos);
  }
}

TEST_CASE("defaults fill what a file leaves out, and the name defaults to the file stem", "[config]") {
  const auto tmp = std::filesystem::temp_directory_path() / "svqa_unnamed.yaml";
  std::ofstream(tmp) << "runtime: {threads: 1}\n";
  const ExperimentConfig cfg = resolve_experiment(tmp.string(), {}, test::TestRegistries().sections());
  CHECK(cfg.header.name == "svqa_unnamed");
  CHECK(cfg.header.runtime.device == "cpu");
  CHECK(cfg.header.runtime.dtype == "float32");
  CHECK(cfg.header.output.dir == "results");
  CHECK(cfg.components.empty());
}

TEST_CASE("every broken fixture fails with its exact located error line", "[config]") {
  std::vector<std::string> fixtures;
  for (const auto& e : std::filesystem::directory_iterator(kBroken)) fixtures.push_back(e.path().string());
  std::sort(fixtures.begin(), fixtures.end());
  REQUIRE(fixtures.size() >= 10);

  for (const auto& path : fixtures) {
    std::ifstream in(path);
    std::string line, expect;
    std::vector<std::string> sets;
    while (std::getline(in, line) && line.rfind("# ", 0) == 0) {
      if (line.rfind("# expect: ", 0) == 0) expect = replace_all(line.substr(10), "{file}", path);
      if (line.rfind("# set: ", 0) == 0) sets.push_back(line.substr(7));
    }
    INFO("fixture " << path);
    REQUIRE(!expect.empty());
    std::vector<std::string> got;
    try {
      resolve_experiment(path, sets, test::TestRegistries().sections());
    } catch (const ConfigError& e) {
      got = e.lines();
    }
    INFO("errors:\n" << [&] {
      std::string s;
      for (const auto& l : got) s += "  " + l + "\n";
      return s;
    }());
    CHECK(std::find(got.begin(), got.end(), expect) != got.end());
  }
}

TEST_CASE("all problems in a file are reported at once", "[config]") {
  const auto tmp = std::filesystem::temp_directory_path() / "svqa_many_errors.yaml";
  std::ofstream(tmp) << "runtime:\n  threads: -1\n  dtype: fp8\nretrieval:\n  type: internal\n  options: {top_k: 0}\n";
  try {
    resolve_experiment(tmp.string(), {}, test::TestRegistries().sections());
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK(e.lines().size() == 3);
  }
}

TEST_CASE("a --set of SECTION.type=X gives X's defaults, not the old type's options", "[config]") {
  const test::TestRegistries registries;
  const RegistrySections reg = registries.sections();
  // child.yaml: retrieval external with retrieve_size 5.
  auto retrieval = [&](const std::vector<std::string>& sets) {
    const ExperimentConfig cfg = resolve_experiment(kGood + "child.yaml", sets, reg);
    return std::make_pair(cfg.component("retrieval")->type, options_of<test::TopKOptions>(cfg, "retrieval"));
  };
  const auto [type, options] = retrieval({"retrieval.type=internal"});
  CHECK(type == "internal");
  CHECK(options.retrieve_size == 64);  // internal's default, not external's 5 from the file
  CHECK(retrieval({"retrieval.type=external"}).second.retrieve_size == 5);  // the same type keeps its options
  // Options given on the command line apply on top of the new type's defaults, in either order.
  CHECK(retrieval({"retrieval.options.retrieve_size=7", "retrieval.type=internal"}).second.retrieve_size == 7);
  CHECK(retrieval({"retrieval.type=internal", "retrieval.options.retrieve_size=7"}).second.retrieve_size == 7);
  // docs/configuration.md: a whole section replaced at once.
  const auto whole = retrieval({"retrieval={type: internal, options: {top_k: 3}}"});
  CHECK(whole.first == "internal");
  CHECK(whole.second.top_k == 3);
  CHECK(whole.second.retrieve_size == 64);
}

TEST_CASE("a child file that changes a section's type gives the new type's defaults", "[config]") {
  const auto dir = std::filesystem::temp_directory_path() / "svqa_type_change";
  std::filesystem::create_directories(dir);
  const std::string parent = std::filesystem::absolute(kGood + "child.yaml").string();  // retrieval: external, retrieve_size 5
  auto retrieval = [&](const std::string& section) {
    std::ofstream(dir / "x.yaml") << "_base_: " << parent << "\nretrieval: " << section << "\n";
    const ExperimentConfig cfg = resolve_experiment((dir / "x.yaml").string(), {}, test::TestRegistries().sections());
    return std::make_pair(cfg.component("retrieval")->type, options_of<test::TopKOptions>(cfg, "retrieval"));
  };
  const auto [type, options] = retrieval("{type: internal}");
  CHECK(type == "internal");
  CHECK(options.retrieve_size == 64);  // internal's default, not external's 5 from the base
  CHECK(retrieval("{type: internal, options: {top_k: 3}}").second.retrieve_size == 64);
  CHECK(retrieval("{type: external, options: {top_k: 3}}").second.retrieve_size == 5);  // same type: merged
  CHECK(retrieval("{options: {top_k: 3}}").second.retrieve_size == 5);                  // no type: merged
  std::filesystem::remove_all(dir);
}

TEST_CASE("200k keys load and merge in linear time, duplicates still found", "[config]") {
  // The audit: 200k keys took over 120 s (a scan of the map per key, in parsing and in _base_ merging).
  const auto dir = std::filesystem::temp_directory_path() / "svqa_many_keys";
  std::filesystem::create_directories(dir);
  const int n = 200000;
  {
    std::ofstream base(dir / "base.yaml"), child(dir / "child.yaml");
    base << "many:\n";
    child << "_base_: base.yaml\nmany:\n";
    for (int i = 0; i < n; ++i) {
      base << "  k" << i << ": " << i << "\n";
      if (i % 2) child << "  k" << i << ": changed\n";
    }
    child << "  extra: 1\n";
  }
  const ConfigNode merged = load_config((dir / "child.yaml").string());
  const ConfigNode* many = merged.find("many");
  REQUIRE(many != nullptr);
  REQUIRE(many->entries.size() == static_cast<size_t>(n) + 1);
  CHECK(many->entries[3].value.scalar == "changed");
  CHECK(many->entries[4].value.scalar == "4");
  CHECK(many->entries.back().key == "extra");

  std::ofstream(dir / "child.yaml", std::ios::app) << "  k" << n - 1 << ": again\n";
  try {
    load_config((dir / "child.yaml").string());
    FAIL("expected a duplicate key error");
  } catch (const ConfigError& e) {
    CHECK(e.lines().front() == (dir / "child.yaml").string() + ":" + std::to_string(n / 2 + 4) +
                                   ":3: many.k199999: duplicate key (first defined at " + (dir / "child.yaml").string() +
                                   ":" + std::to_string(n / 2 + 2) + ":3)");
  }
  std::filesystem::remove_all(dir);
}

}  // namespace svqa
