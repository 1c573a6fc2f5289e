#pragma once
// The comparison tables of `svqa report`, from run summaries in the order given (order_runs: the
// grid's): report.md (markdown), report.csv (long format: one row per run × benchmark × category)
// and report.tex (one LaTeX booktabs table per benchmark, for \input; needs \usepackage{booktabs}
// and graphicx). Columns a paper uses: method (display name), the settings where a method has several
// runs, accuracy overall and per task group, memory (tokens held, tokens attended, GB/h), TTFT and
// encode fps as median (min–max), timings taken on a busy machine marked †. The LaTeX table fits
// one column (two-line headers, ranges under medians, shrunk only when still wider); `\svqatable`
// (default table) picks its float, table* for a page-wide one in a two-column paper.

#include <string>
#include <vector>

#include "app/report/run_report.h"

namespace svqa {

std::string report_markdown(const std::vector<RunSummary>& runs);
std::string report_csv(const std::vector<RunSummary>& runs);
std::string report_latex(const std::vector<RunSummary>& runs);

// `text` with LaTeX's special characters escaped (& % $ # _ { } ~ ^ \); a run of characters past
// Latin-1 (CJK) as \svqaunicode{text}{U+XXXX ...}, which report.tex defines: the codes under
// pdflatex, the text under lualatex and xelatex.
std::string latex_escape(const std::string& text);

}  // namespace svqa
