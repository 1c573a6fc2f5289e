#pragma once
// OVO-Bench's aggregation (utils/OVOBenchScore.py): a task's score is the mean over its scored
// entries, a forward task's probes pooled as the official code pools them; a group's score is the
// mean of its tasks' scores; the total is the mean of the three groups' (only when all three have
// one: the official script stops otherwise). Beside each, the per-item average OVO-Bench's issue #7
// asks for: each record's probes averaged first, then the records (the same for multiple choice).

#include <optional>
#include <string>
#include <vector>

#include "engine/benchmark.h"

namespace svqa {

struct OvoBenchMean {
  std::optional<double> pooled;    // the official figure
  std::optional<double> per_item;  // issue #7: probes averaged per record first
};

struct OvoBenchTask {
  std::string task, group;
  int64_t items = 0, scored = 0, correct = 0;  // items: records with a scored probe; scored: entries
  OvoBenchMean score;
};

struct OvoBenchGroup {
  std::string group;
  OvoBenchMean score;
};

struct OvoBenchSummary {
  std::vector<OvoBenchTask> tasks;    // constant.py's order
  std::vector<OvoBenchGroup> groups;  // backward, realtime, forward
  OvoBenchMean total;
};

// One judged question: the stream and question it was, and whether it counted and was right.
struct OvoBenchOutcome {
  const Question* question = nullptr;
  bool scored = false, correct = false;
};

// From every question's outcome (missing, errored, unanswered ones: scored = false). The item is the
// question's "item" tag (its own id if none).
OvoBenchSummary ovobench_summary(const std::vector<OvoBenchOutcome>& outcomes);

}  // namespace svqa
