#include "app/report/paper_columns.h"

#include <algorithm>
#include <cmath>

#include "core/io/format.h"

namespace svqa {

std::optional<double> measured_figure(const RunSummary& r, const std::string& metric) {
  const auto percent = [](std::optional<double> v) { return v ? std::optional<double>(*v * 100) : std::nullopt; };
  if (metric == "accuracy") return percent(r.scores.overall.accuracy());
  if (metric == "m_avg") return percent(r.scores.macro_accuracy);
  if (metric == "judge_accuracy") return percent(r.judge_accuracy);
  if (metric == "judge_score") return r.judge_score;
  const std::string prefix = "category:";
  if (metric.compare(0, prefix.size(), prefix) == 0)
    for (const auto& [name, tally] : r.scores.categories)
      if (name == metric.substr(prefix.size())) return percent(tally.accuracy());
  return std::nullopt;
}

bool any_expected(const std::vector<const RunSummary*>& runs) {
  return std::any_of(runs.begin(), runs.end(), [](const RunSummary* r) { return r->expected.has_value(); });
}

std::string paper_header_md() { return " | paper | Δ"; }

std::string paper_cells_md(const RunSummary& r) {
  if (!r.expected) return " |  | ";
  const ExpectedResult& e = *r.expected;
  const int digits = e.metric == "judge_score" ? 2 : 1;
  std::string cells = " | " + fmt::format("{:.{}f}", e.value, digits) + " (" + e.metric + ") | ";
  if (const auto ours = measured_figure(r, e.metric)) {
    const double delta = *ours - e.value;
    cells += fmt::format("{:+.{}f}", delta, digits) + (std::abs(delta) > e.tolerance ? " !" : "");
  }
  return cells;
}

std::string paper_note_md(const std::vector<RunSummary>& runs) {
  std::string sources;
  for (const auto& r : runs)
    if (r.problem.empty() && r.expected)
      sources += (sources.empty() ? "" : "; ") + r.label + ": " + r.expected->source + " (arXiv " + r.expected->arxiv +
                 (r.expected->note.empty() ? "" : "; " + r.expected->note) + ")";
  if (sources.empty()) return "";
  return "Paper: the figure the paper reports for the run's setting (its `expected:`); Δ: ours − paper, marked ! "
         "where |Δ| exceeds the stated tolerance. Sources: " + sources + ".\n";
}

}  // namespace svqa
