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

}  // namespace svqa
