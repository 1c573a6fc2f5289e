#pragma once
// Hand-made questions and predictions for tests of answer rules, scoring and judging.

#include <string>
#include <utility>
#include <vector>

#include "benchmarks/scoring/predictions.h"
#include "engine/benchmark.h"

namespace svqa::test {

// A four-option question (a, b, c, d) whose answer is `gold_text`, in `category`.
inline Question mc(const std::string& id, const std::string& category, const std::string& gold_text,
                       std::vector<std::pair<double, double>> evidence = {}) {
  Question q;
  q.id = id;
  q.category = category;
  q.options = {"a", "b", "c", "d"};
  q.answer = gold_text;
  q.evidence = std::move(evidence);
  return q;
}
inline Prediction pred(const std::string& id, const std::string& output, const std::string& stream = "") {
  Prediction p;
  p.question_id = id;
  p.output = output;
  p.stream = stream;
  return p;
}

}  // namespace svqa::test
