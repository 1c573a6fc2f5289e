// `svqa export-results RUN`: a run's predictions as the benchmark's own results file
// (benchmarks/scoring/results_export.h), for the official scripts and for submission.

#define CXXOPTS_VECTOR_DELIMITER '\x1f'  // as in cli.cpp: one cxxopts configuration per program
#include <cxxopts.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "benchmarks/datasets/ovobench.h"
#include "benchmarks/scoring/results_export.h"
#include "benchmarks/datasets/streamingbench.h"
#include "benchmarks/datasets/streamingbench_sqa.h"
#include "app/cli/cli_commands.h"
#include "core/config/experiment.h"
#include "engine/registries.h"
#include "core/io/atomic_file.h"

namespace svqa {
namespace {

// The annotation file of the run's benchmark, and the format its results file has.
std::pair<std::string, std::string> annotations_and_format(const ComponentChoice& benchmark) {
  if (benchmark.type == "ovobench") return {std::any_cast<OvoBenchOptions>(benchmark.options).annotations, "ovobench"};
  if (benchmark.type == "streamingbench" || benchmark.type == "streamingbench_sqa" ||
      benchmark.type == "streamingbench_proactive")  // one options struct
    return {std::any_cast<StreamingBenchOptions>(benchmark.options).annotations, "streamingbench"};
  throw UsageError("benchmark '" + benchmark.type +
                   "' has no results file format here (ovobench, streamingbench, streamingbench_sqa, streamingbench_proactive have)");
}

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot be read");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": not JSON: " + e.what());
  }
}

}  // namespace

int cmd_export_results(int argc, const char* const* argv, const Registries& registries) {
  cxxopts::Options options("svqa export-results",
                           "Write a run's predictions as its benchmark's own results file: OVO-Bench's "
                           "{backward, realtime, forward} (score.py), StreamingBench's annotation file with the "
                           "model's answers under --model (count.py).");
  options.add_options()("run", "the run's folder (config.yaml, predictions.jsonl)", cxxopts::value<std::string>())(
      "format", "ovobench or streamingbench (must be the run's benchmark's)", cxxopts::value<std::string>())(
      "model", "StreamingBench: the key the answers go under (default: the run's name)", cxxopts::value<std::string>())(
      "out", "the file written (default: RUN/<format>_results.json)", cxxopts::value<std::string>())(
      "h,help", "show this help");
  options.parse_positional({"run"});
  options.positional_help("RUN");
  const auto args = options.parse(argc, argv);
  if (args.count("help")) {
    std::cout << options.help();
    return 0;
  }
  if (!args.unmatched().empty()) throw UsageError("unexpected argument '" + args.unmatched()[0] + "'");
  if (!args.count("run")) throw UsageError("missing the run folder (RUN)");
  const std::string run = args["run"].as<std::string>();
  if (!std::filesystem::is_regular_file(run + "/config.yaml") || !std::filesystem::is_regular_file(run + "/predictions.jsonl"))
    throw UsageError(run + ": not a run folder (expected config.yaml and predictions.jsonl)");
  const ExperimentConfig cfg = resolve_experiment(run + "/config.yaml", {}, registries.sections());
  const ComponentChoice* benchmark = cfg.component("benchmark");
  if (!benchmark) throw UsageError(run + "/config.yaml: no benchmark section");
  const auto [annotations, format] = annotations_and_format(*benchmark);
  if (args.count("format") && args["format"].as<std::string>() != format)
    throw UsageError("--format " + args["format"].as<std::string>() + ": the run's benchmark '" + benchmark->type +
                     "' is written as " + format);

  const auto records = read_predictions(run + "/predictions.jsonl");
  ExportCounts counts;
  const auto by_id = predictions_by_id(records, counts);
  const nlohmann::json file =
      format == "ovobench"
          ? ovobench_results_file(read_json_file(annotations), by_id, counts)
          : streamingbench_results_file(read_json_file(annotations), by_id,
                                        args.count("model") ? args["model"].as<std::string>() : cfg.header.name, counts);
  const std::string out = args.count("out") ? args["out"].as<std::string>() : run + "/" + format + "_results.json";
  write_file_atomically(out, file.dump(4, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  std::cout << out << ": " << counts.written << " responses, " << counts.errored << " error records ("
            << (format == "ovobench" ? "null: the official scorer counts them wrong" : "left without an answer")
            << "), " << counts.missing << " questions without a prediction (left out)\n";
  if (counts.duplicates)
    std::cerr << "svqa export-results: " << run << "/predictions.jsonl: " << counts.duplicates
              << " questions have several predictions (" << counts.conflicting
              << " of them differ): the last of each is exported, as svqa score counts it\n";
  return 0;
}

}  // namespace svqa
