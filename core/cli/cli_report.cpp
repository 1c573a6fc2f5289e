// `svqa report DIR...`: every run under the given directories in one comparison table (markdown
// on stdout and in report.md, long-format report.csv) with PNG plots beside them.

#define CXXOPTS_VECTOR_DELIMITER '\x1f'  // as in cli.cpp: one cxxopts configuration per program
#include <cxxopts.hpp>

#include <iostream>

#include "core/io/atomic_file.h"
#include "core/cli/cli_commands.h"
#include "core/engine/registries.h"
#include "core/report/run_report.h"

namespace svqa {

int cmd_report(int argc, const char* const* argv, const Registries& registries) {
  cxxopts::Options options("svqa report",
                           "Compare runs: every run directory at or below each DIR (svqa run / svqa grid results) in "
                           "one table of runs x benchmarks x categories, as markdown (stdout, report.md) and CSV, "
                           "with PNG plots (accuracy vs memory tokens; retrieval score over stream time).");
  options.add_options()("dirs", "results directories", cxxopts::value<std::vector<std::string>>())(
      "out", "where report.md, report.csv and the plots go (default: the first DIR)", cxxopts::value<std::string>())(
      "question", "STREAM/ID of the question whose retrieval scores are plotted (default: the latest asked)",
      cxxopts::value<std::string>())("h,help", "show this help");
  options.parse_positional({"dirs"});
  options.positional_help("DIR...");
  const auto args = options.parse(argc, argv);
  if (args.count("help")) {
    std::cout << options.help();
    return 0;
  }
  if (!args.count("dirs")) throw UsageError("missing the results directories (DIR...)");
  const auto roots = args["dirs"].as<std::vector<std::string>>();
  const std::string out = args.count("out") ? args["out"].as<std::string>() : roots.front();

  std::vector<RunSummary> runs;
  for (const auto& dir : find_run_dirs(roots)) runs.push_back(summarize_run(dir, registries));
  distinct_names(runs);
  const std::string markdown = report_markdown(runs);
  std::cout << markdown;
  write_file_atomically(out + "/report.md", markdown);
  write_file_atomically(out + "/report.csv", report_csv(runs));
  std::cout << "\nwritten: " << out << "/report.md, " << out << "/report.csv";
  for (const auto& png : write_report_plots(runs, out, args.count("question") ? args["question"].as<std::string>() : ""))
    std::cout << ", " << png;
  std::cout << "\n";
  int problems = 0;
  for (const auto& r : runs) problems += !r.problem.empty();
  return problems ? 1 : 0;
}

}  // namespace svqa
