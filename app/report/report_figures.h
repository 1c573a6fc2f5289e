#pragma once
// The figures of `svqa report`: their data as one tidy CSV (figures.csv: figure, benchmark,
// backbone, budget, series, point label, x, y), drawn by app/report/figures.py with matplotlib into PDF and SVG (for
// papers) and PNG (quick looks), plus figures.json (each figure's axes limits, points and labels).
//   accuracy_vs_memory[_<benchmark>]     accuracy against K/V tokens held; a point per run, labelled
//   accuracy_vs_inference[_<benchmark>]  accuracy against tokens attended while answering
//   ttft_vs_stream_time                  time to first token against when the question came (warm-up left out)
//   retrieval_temporal_bias              where in the past the retrieved blocks lie (0: just before the question)
//   retrieval_scores                     one question's block scores over stream time (--question)

#include <string>
#include <vector>

#include "app/report/run_report.h"

namespace svqa {

// The tidy CSV of every figure. `question` ("STREAM/ID") picks the question of the score figure;
// empty: the latest question of the first run that has scores. Throws std::invalid_argument for
// a malformed or unknown --question.
std::string figure_data_csv(const std::vector<RunSummary>& runs, const std::string& question);

// Runs `python figures.py --data CSV --out DIR`; returns the files it wrote (figures.json lists
// them). Throws std::runtime_error naming the command when it fails (matplotlib missing: the
// one-line setup that installs it).
std::vector<std::string> draw_figures(const std::string& python, const std::string& script, const std::string& data_csv,
                                      const std::string& out_dir);

}  // namespace svqa
