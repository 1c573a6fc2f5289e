#include "benchmarks/scoring/ovobench_score.h"

#include <map>

#include "benchmarks/datasets/ovobench.h"

namespace svqa {
namespace {

const char* const kTasks[] = {"EPM", "ASI", "HLD", "OCR", "ACR", "ATR", "STU", "FPD", "OJR", "REC", "SSR", "CRR"};

std::optional<double> mean(const std::vector<double>& v) {
  if (v.empty()) return std::nullopt;
  double sum = 0;
  for (const double x : v) sum += x;
  return sum / double(v.size());
}

// Mean of the present values of one kind (pooled or per item) of each mean.
template <typename T>
OvoBenchMean mean_of(const std::vector<T>& parts) {
  std::vector<double> pooled, per_item;
  for (const auto& p : parts) {
    if (p.score.pooled) pooled.push_back(*p.score.pooled);
    if (p.score.per_item) per_item.push_back(*p.score.per_item);
  }
  return {mean(pooled), mean(per_item)};
}

}  // namespace

OvoBenchSummary ovobench_summary(const std::vector<OvoBenchOutcome>& outcomes) {
  struct Count {
    int64_t scored = 0, correct = 0;
  };
  std::map<std::string, Count> by_task;
  std::map<std::string, std::map<std::string, Count>> by_item;  // task → item → its probes
  for (const auto& o : outcomes) {
    if (!o.scored) continue;
    const Question& q = *o.question;
    const auto item = q.tags.find("item");
    for (Count* c : {&by_task[q.category], &by_item[q.category][item == q.tags.end() ? q.id : item->second]})
      ++c->scored, c->correct += o.correct;
  }
  OvoBenchSummary s;
  for (const char* task : kTasks) {
    const auto it = by_task.find(task);
    if (it == by_task.end()) continue;
    OvoBenchTask t{task, ovobench_group(task), 0, it->second.scored, it->second.correct, {}};
    std::vector<double> item_means;
    for (const auto& [_, c] : by_item[task]) item_means.push_back(double(c.correct) / double(c.scored));
    t.items = static_cast<int64_t>(item_means.size());
    t.score = {double(t.correct) / double(t.scored), mean(item_means)};
    s.tasks.push_back(std::move(t));
  }
  for (const char* group : {"backward", "realtime", "forward"}) {
    std::vector<OvoBenchTask> members;
    for (const auto& t : s.tasks)
      if (t.group == group) members.push_back(t);
    if (!members.empty()) s.groups.push_back({group, mean_of(members)});
  }
  if (s.groups.size() == 3) s.total = mean_of(s.groups);
  return s;
}

}  // namespace svqa
