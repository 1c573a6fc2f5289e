// Grids: every run validated before any starts, cross-field rules included, errors located at the
// axis value that caused them.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/config/config_loader.h"
#include "core/config/experiment.h"
#include "core/config/grid.h"
#include "tests/test_registries.h"

namespace svqa {
namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  const auto p = std::filesystem::temp_directory_path() / name;
  std::ofstream(p) << text;
  return p.string();
}

std::vector<std::string> precheck_errors(const std::string& path) {
  const test::TestRegistries registries;
  try {
    validate_grid_runs(expand_grid(load_config(path), path), path, registries.sections());
  } catch (const ConfigError& e) {
    return e.lines();
  }
  return {};
}

}  // namespace

TEST_CASE("the grid pre-check names file:line and key of a cross-field error in any run", "[grid]") {
  const std::string path = write_temp("svqa_grid_cross_field.yaml",
                                      "name: g\n"
                                      "encoding: {type: sliding_window, options: {n_local: 8}}\n"
                                      "grid:\n"
                                      "  axes:\n"
                                      "    encoding.options.chunk_frames: [4, 16]\n"
                                      "    runtime.threads: [1, 2]\n");
  const auto lines = precheck_errors(path);
  REQUIRE(lines.size() == 1);  // the same problem in two runs is reported once, naming both
  CHECK(lines[0] == path + ":5:40: encoding.options.chunk_frames: must be at most n_local (8): a chunk fits in the window "
                           "(runs g__chunk_frames=16__threads=1, g__chunk_frames=16__threads=2)");
  CHECK(precheck_errors(write_temp("svqa_grid_fine.yaml", "encoding: {type: sliding_window, options: {n_local: 8}}\n"
                                                          "grid: {axes: {encoding.options.chunk_frames: [4, 8]}}\n"))
            .empty());
}

TEST_CASE("a grid axis that changes a component's type starts it from that type's defaults", "[grid]") {
  const std::string path = write_temp("svqa_grid_types.yaml",
                                      "retrieval: {type: external, options: {retrieve_size: 5}}\n"
                                      "grid:\n"
                                      "  axes:\n"
                                      "    retrieval.options.top_k: [3]\n"
                                      "    retrieval.type: [external, internal]\n");
  const test::TestRegistries registries;
  const auto configs = validate_grid_runs(expand_grid(load_config(path), path), path, registries.sections());
  REQUIRE(configs.size() == 2);
  const auto& same = std::any_cast<const test::TopKOptions&>(configs[0].component("retrieval")->options);
  const auto& other = std::any_cast<const test::TopKOptions&>(configs[1].component("retrieval")->options);
  CHECK(same.retrieve_size == 5);
  CHECK(other.retrieve_size == 64);
  CHECK((same.top_k == 3 && other.top_k == 3));  // the other axis applies on top, whatever the axes' order
}

namespace {

std::vector<std::string> run_names(const std::string& yaml) {
  const std::string path = write_temp("svqa_grid_names.yaml", yaml);
  std::vector<std::string> names;
  for (const auto& run : expand_grid(load_config(path), path)) names.push_back(run.name);
  return names;
}

std::string grid_error(const std::string& yaml) {
  const std::string path = write_temp("svqa_grid_error.yaml", yaml);
  try {
    expand_grid(load_config(path), path);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("an axis value can carry a label, which names its runs", "[grid]") {
  const std::string path = write_temp("svqa_grid_labels.yaml",
                                      "name: g\n"
                                      "grid:\n"
                                      "  axes:\n"
                                      "    retrieval.options.retrieve_size: [{label: r4, value: 4}, 8]\n");
  const auto runs = expand_grid(load_config(path), path);
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].name == "g__r4");
  CHECK(runs[1].name == "g__retrieve_size=8");
  CHECK(runs[0].settings[0] == std::make_pair(std::string("retrieval.options.retrieve_size"), std::string("r4")));
  CHECK(to_yaml(runs[0].config).find("retrieve_size: 4") != std::string::npos);  // the value, not the label, is set
  CHECK(to_yaml(runs[0].config).find("label") == std::string::npos);
}

TEST_CASE("two runs of a grid never get the same visible name", "[grid]") {
  // Two sections of one type, and two axes whose keys end alike.
  const auto names = run_names("name: g\n"
                               "grid:\n"
                               "  axes:\n"
                               "    retrieval: [{type: internal, options: {retrieve_size: 4}}, {type: internal}]\n"
                               "    encoding.options.chunk_frames: [1, 2]\n"
                               "    stream.chunk_frames: [8]\n");
  CHECK(names == std::vector<std::string>{
                     "g__retrieval=internal-retrieve_size=4__options.chunk_frames=1__stream.chunk_frames=8",
                     "g__retrieval=internal-retrieve_size=4__options.chunk_frames=2__stream.chunk_frames=8",
                     "g__retrieval=internal__options.chunk_frames=1__stream.chunk_frames=8",
                     "g__retrieval=internal__options.chunk_frames=2__stream.chunk_frames=8"});
  // Sections of one type are named by the options in which they differ; values alike in text but
  // not in value still get their position.
  CHECK(run_names("name: b\ngrid:\n  axes:\n"
                  "    encoding: [{type: w, options: {n: 60, m: 1}}, {type: w, options: {n: 120, m: 1}}]\n") ==
        std::vector<std::string>{"b__encoding=w-n=60", "b__encoding=w-n=120"});
  CHECK(run_names("name: c\ngrid:\n  axes:\n    x: [{type: t, options: {k: [1, 2]}}, {type: t, options: {k: [1, 3]}}, "
                  "{type: t, options: {k: {a: 1}}}]\n") ==
        std::vector<std::string>{"c__x=t-k=1+2", "c__x=t-k=1+3", "c__x=t-k.a=1"});
  // Zip mode and labels: still one name per run.
  const auto zipped = run_names("name: z\ngrid:\n  mode: zip\n  axes:\n"
                                "    a.x: [{label: fast, value: 1}, {label: slow, value: 2}]\n"
                                "    b.x: [{label: slow, value: 1}, {label: fast, value: 2}]\n");
  CHECK(zipped == std::vector<std::string>{"z__fast__slow", "z__slow__fast"});

  CHECK_THAT(grid_error("grid: {axes: {a.x: [1, 1]}}\n"),
             Catch::Contains("grid.axes.a.x[1]: the same value as grid.axes.a.x[0]: its runs would be identical"));
  // Zip: a value may repeat on one axis (one encoder beside several retrievals), a whole tuple may not.
  const auto repeated = run_names("name: r\ngrid:\n  mode: zip\n  axes:\n    a.x: [1, 1]\n    b.x: [1, 2]\n");
  CHECK(repeated == std::vector<std::string>{"r__a.x=1__b.x=1", "r__a.x=1__b.x=2"});
  CHECK_THAT(grid_error("grid: {mode: zip, axes: {a.x: [1, 1], b.x: [2, 2]}}\n"),
             Catch::Contains("grid.axes.a.x[1]: zip: the same values as [0] on every axis: its runs would be identical"));
  CHECK_THAT(grid_error("grid: {axes: {a.x: [{label: p, value: 1}, {label: p, value: 2}]}}\n"),
             Catch::Contains("grid.axes.a.x[1].label: 'p' labels grid.axes.a.x[0] already"));
  CHECK_THAT(grid_error("grid: {axes: {a.x: [{label: p}]}}\n"),
             Catch::Contains("grid.axes.a.x[0]: a labelled value is {label: NAME, value: VALUE}, got keys label"));
  CHECK_THAT(grid_error("grid: {axes: {a.x: [{label: a/b, value: 1}]}}\n"),
             Catch::Contains("grid.axes.a.x[0].label: expected a name of letters, digits and _ . + -"));
}

}  // namespace svqa
