#pragma once
// The paper's figure beside ours in `svqa report`'s table: for runs whose experiment carries
// `expected:` (core/config/expected_result.h), a "paper" column (the reported value and its metric),
// a "Δ" column (ours − paper, in the metric's unit) marked "!" where |Δ| exceeds the stated
// tolerance, and a note naming each figure's source.

#include <optional>
#include <string>
#include <vector>

#include "app/report/run_report.h"

namespace svqa {

// Our figure in the metric `expected.metric` names (percent for accuracies); nullopt: not measured yet.
std::optional<double> measured_figure(const RunSummary& r, const std::string& metric);

// Whether any of `runs` carries `expected:` (the columns are shown only then).
bool any_expected(const std::vector<const RunSummary*>& runs);

// The markdown header cells " | paper | Δ" and one run's " | 58.4 (accuracy) | -1.3 !" (empty cells for a
// run without `expected:`), each put after the accuracy column.
std::string paper_header_md();
std::string paper_cells_md(const RunSummary& r);

// "Paper figures: ReKV: ReKV, Table 3 (arXiv 2503.00540); ..." with the marker explained; "" when none.
std::string paper_note_md(const std::vector<RunSummary>& runs);

}  // namespace svqa
