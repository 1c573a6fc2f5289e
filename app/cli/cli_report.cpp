// `svqa report DIR...`: every run under the given directories in one comparison, rows in the grid's
// order: report.md (also on stdout), report.csv, report.tex, and figures (PDF, SVG, PNG) drawn by
// figures.py (app/report/figures.py, installed beside the binary in BIN/../share/svqa/) with
// matplotlib from their tidy data, figures.csv.

#define CXXOPTS_VECTOR_DELIMITER '\x1f'  // as in cli.cpp: one cxxopts configuration per program
#include <cxxopts.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "core/io/atomic_file.h"
#include "app/cli/cli_commands.h"
#include "engine/registries.h"
#include "app/report/causality_check.h"
#include "app/report/report_figures.h"
#include "app/report/report_tables.h"
#include "app/report/run_report.h"

namespace svqa {
namespace {

// BIN/../share/svqa of this binary: its figure script and the Python recorded for it, put there by
// the build (build/share/svqa) and by `cmake --install` (PREFIX/share/svqa), never another checkout's.
std::filesystem::path share_dir() {
  return std::filesystem::read_symlink("/proc/self/exe").parent_path().parent_path() / "share" / "svqa";
}

// --python, else $SVQA_PYTHON, else the one recorded at build or install (share/svqa/python).
std::string python_of(const cxxopts::ParseResult& args) {
  if (args.count("python")) return args["python"].as<std::string>();
  if (const char* env = std::getenv("SVQA_PYTHON"); env && *env) return env;
  const auto record = share_dir() / "python";
  std::ifstream in(record);
  std::string python;
  if (!std::getline(in, python) || python.empty())
    throw std::runtime_error("figures: " + record.string() +
                             ": no Python recorded (reinstall, or --python / SVQA_PYTHON; --no-figures for tables only)");
  return python;
}

std::string figure_script() {
  const auto script = share_dir() / "figures.py";
  if (!std::filesystem::is_regular_file(script))
    throw std::runtime_error("figures: " + script.string() +
                             ": missing (installed beside the binary by the build and `cmake --install`; "
                             "--no-figures for tables only)");
  return script.string();
}

}  // namespace

int cmd_report(int argc, const char* const* argv, const Registries& registries) {
  cxxopts::Options options("svqa report",
                           "Compare runs: every run directory at or below each DIR (svqa run / svqa grid results), rows "
                           "in the grid's order, as markdown (stdout, report.md), CSV and a LaTeX booktabs table "
                           "(report.tex), with figures as PDF, SVG and PNG (accuracy vs memory and inference tokens, "
                           "TTFT vs stream time, retrieval temporal bias, one question's retrieval scores).");
  options.add_options()("dirs", "results directories", cxxopts::value<std::vector<std::string>>())(
      "out", "where the tables and figures go (default: the first DIR)", cxxopts::value<std::string>())(
      "question", "STREAM/ID of the question whose retrieval scores are plotted (default: the latest asked)",
      cxxopts::value<std::string>())(
      "python",
      "the Python with matplotlib that draws the figures (default: $SVQA_PYTHON, else the one recorded at build or "
      "install in BIN/../share/svqa/python)",
      cxxopts::value<std::string>())("no-figures", "tables only")("h,help", "show this help");
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
  const std::string question = args.count("question") ? args["question"].as<std::string>() : "";

  std::vector<RunSummary> runs;
  for (const auto& dir : find_run_dirs(roots)) runs.push_back(summarize_run(dir, registries));
  order_runs(runs);
  distinct_names(runs);
  for (const auto& r : runs)
    if (const std::string line = frames_after_question_line(r); !line.empty())
      std::cerr << "svqa report: warning: " << line << "\n";
  std::string figure_data;
  try {
    figure_data = figure_data_csv(runs, question);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const std::string markdown = report_markdown(runs);
  std::cout << markdown;
  write_file_atomically(out + "/report.md", markdown);
  write_file_atomically(out + "/report.csv", report_csv(runs));
  write_file_atomically(out + "/report.tex", report_latex(runs));
  write_file_atomically(out + "/figures.csv", figure_data);
  std::cout << "\nwritten: " << out << "/report.md, " << out << "/report.csv, " << out << "/report.tex, " << out
            << "/figures.csv";
  if (!args.count("no-figures"))
    for (const auto& file : draw_figures(python_of(args), figure_script(), out + "/figures.csv", out))
      std::cout << ", " << file;
  std::cout << "\n";
  int problems = 0;
  for (const auto& r : runs) problems += !r.problem.empty();
  return problems ? 1 : 0;
}

}  // namespace svqa
