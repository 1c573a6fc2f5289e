#pragma once
// An experiment's `expected:` section: the figure a paper reports for the setting the experiment
// reproduces, so `svqa report` can put it beside ours (columns "paper" and "Δ", marked where |Δ|
// exceeds the tolerance). It names what a run is compared with, not what it computes: it never
// blocks a resume (core/config/run_time_keys.h).
//
//   expected: {value: 54.7, metric: accuracy, tolerance: 1.0, source: "ReKV, Table 3 (MLVU dev)",
//              arxiv: "2503.00540"}

#include <optional>
#include <string>

#include "core/config/schema.h"

namespace svqa {

struct ExpectedResult {
  double value = 0;
  std::string metric = "accuracy";
  double tolerance = 1.0;
  std::string source;
  std::string arxiv;
  std::string note;
  static void declare(Schema<ExpectedResult>& s) {
    s.field("value", &ExpectedResult::value, "the paper's figure as printed (percent for accuracies)").required();
    s.field("metric", &ExpectedResult::metric,
            "which of our figures it is compared with: accuracy (overall, %), m_avg (mean over tasks, %), "
            "judge_accuracy (%), judge_score (0-5), or category:NAME (one task's accuracy, %)")
        .matches("accuracy|m_avg|judge_accuracy|judge_score|category:[^\\x00-\\x1f\\x7f]{1,200}",
                 "accuracy, m_avg, judge_accuracy, judge_score or category:NAME");
    s.field("tolerance", &ExpectedResult::tolerance,
            "largest |ours - paper| (in the metric's unit) not marked in the report").min(0).max(1e6);
    s.field("source", &ExpectedResult::source, "the paper and its table, e.g. \"ReKV, Table 3\"").required()
        .matches("[^\\x00-\\x1f\\x7f]{1,300}", "1 to 300 bytes, no control characters");
    s.field("arxiv", &ExpectedResult::arxiv, "the paper's arXiv id, e.g. 2503.00540").required()
        .matches("[0-9]{4}\\.[0-9]{4,5}(v[0-9]+)?", "an arXiv id such as 2503.00540");
    s.field("note", &ExpectedResult::note, "how the setting differs from the paper's, if it does")
        .matches("[^\\x00-\\x1f\\x7f]{0,1000}", "at most 1000 bytes, no control characters");
  }
};

// The section's value, when the experiment has one (validated with the rest of the experiment).
std::optional<ExpectedResult> expected_result(const ConfigNode& root, ErrorList& errors);

}  // namespace svqa
