#include "benchmarks/scoring/scoring.h"

#include <algorithm>
#include <iomanip>
#include <map>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "benchmarks/datasets/answer_parsing.h"
#include "benchmarks/datasets/streamingbench_proactive.h"
#include "benchmarks/scoring/table_convention.h"

namespace svqa {
namespace {

bool overlaps(const std::pair<double, double>& block, const std::vector<std::pair<double, double>>& evidence) {
  for (const auto& [a, b] : evidence)
    if (block.first <= b && block.second >= a) return true;  // both closed: a block spans its first to last frame
  return false;
}

void add_outcome(Tally& t, const std::string& outcome) {
  ++t.questions;
  if (outcome == "correct") ++t.correct;
  else if (outcome == "wrong") ++t.wrong;
  else if (outcome == "unanswered") ++t.unanswered;
  else if (outcome == "missing") ++t.missing;
  else if (outcome == "errored") ++t.errored;
  else if (outcome == "no_gold") ++t.no_gold;
}

using QuestionKey = std::pair<std::string, std::string>;  // stream id, question id

// Which prediction answers each question: by (stream, id), or by id alone where the id is in one
// stream only; the last of several counts. Every question has an entry (null: no prediction).
std::map<QuestionKey, const Prediction*> match_predictions(const std::vector<Stream>& streams,
                                                                 const std::vector<Prediction>& predictions,
                                                                 int64_t& unmatched, int64_t& duplicates) {
  std::map<QuestionKey, const Prediction*> by_key;
  std::map<std::string, std::vector<std::string>> streams_of_id;
  for (const auto& s : streams)
    for (const auto& q : s.questions) {
      by_key[{s.id, q.id}] = nullptr;
      streams_of_id[q.id].push_back(s.id);
    }
  for (const auto& p : predictions) {
    QuestionKey key{p.stream, p.question_id};
    if (!by_key.count(key)) {
      const auto it = streams_of_id.find(p.question_id);
      if (it == streams_of_id.end()) {
        ++unmatched;
        continue;
      }
      if (it->second.size() > 1)
        throw std::runtime_error("predictions line " + std::to_string(p.line) + ": question_id '" + p.question_id +
                                 "' is in several streams (" + it->second[0] + ", " + it->second[1] +
                                 ", ...): give \"stream\" too");
      key = {it->second[0], p.question_id};
    }
    if (by_key[key]) ++duplicates;  // the last one counts
    by_key[key] = &p;
  }
  return by_key;
}

}  // namespace

std::optional<double> Tally::accuracy() const {
  return scored() ? std::optional<double>(double(correct) / double(scored())) : std::nullopt;
}

std::optional<double> RecallTally::recall() const {
  return with_retrieval ? std::optional<double>(double(hits) / double(with_retrieval)) : std::nullopt;
}

std::optional<double> JudgeTally::accuracy() const {
  return yes + no ? std::optional<double>(double(yes) / double(yes + no)) : std::nullopt;
}

std::optional<double> JudgeTally::mean_score() const {
  return score_count ? std::optional<double>(double(score_sum) / double(score_count)) : std::nullopt;
}

namespace {

std::string verdict_outcome(const Verdict& v) {
  return v.outcome == Verdict::Outcome::correct ? "correct" : v.outcome == Verdict::Outcome::wrong ? "wrong" : "unanswered";
}

// The outcome of question `q` under the rule, given its prediction `p` (null: none): missing, errored,
// open_ended, no_gold, or the rule's verdict; a proactive question's also counts in report.proactive.
void judge_outcome(QuestionScore& qs, AnswerRule rule, const Question& q, const Prediction* p, ScoreReport& report) {
  if (!p) qs.outcome = "missing";
  else if (!p->error.empty()) qs.outcome = "errored";
  else if (!judged_by_rule(q)) qs.outcome = "open_ended";
  else if (is_proactive(q)) {  // count.py's proactive rule: the last turn's time and answer
    const Verdict v = proactive_verdict(q, p->time, p->output);
    qs.parsed = v.parsed;
    qs.outcome = verdict_outcome(v);
    if (!report.proactive) report.proactive = ProactiveTally{};
    if (v.outcome != Verdict::Outcome::unanswered) {
      ++report.proactive->scored;
      report.proactive->time_correct += v.parsed == "on time";
      report.proactive->answer_correct += v.outcome == Verdict::Outcome::correct;
    }
  } else if (gold_letter(rule, q).empty()) qs.outcome = "no_gold";
  else {
    const Verdict v = judge(rule, q, p->output);
    qs.parsed = v.parsed;
    qs.outcome = verdict_outcome(v);
  }
}

// Retrieval recall: a question with evidence whose prediction retrieved blocks hits when one overlaps it.
void add_evidence_hit(QuestionScore& qs, const Question& q, const Prediction* p, RecallTally& recall) {
  if (q.evidence.empty()) return;
  ++recall.with_evidence;
  if (!p || p->retrieved.empty()) return;
  bool hit = false;
  for (const auto& layer : p->retrieved)
    for (const int64_t id : layer) {
      const auto span = p->block_spans.find(id);
      hit = hit || (span != p->block_spans.end() && overlaps(span->second, q.evidence));
    }
  ++recall.with_retrieval;
  recall.hits += hit;
  qs.evidence_hit = hit;
}

// The categories in the official table's order, the rest after them by name; their mean where the table has one.
void add_categories(ScoreReport& report, std::map<std::string, Tally> by_category, const TableConvention& convention) {
  for (const auto& [name, _] : convention.rows)
    if (const auto it = by_category.find(name); it != by_category.end()) {
      report.categories.emplace_back(name, it->second);
      by_category.erase(it);
    }
  for (auto& [name, t] : by_category) report.categories.emplace_back(name, t);  // the rest, by name
  if (convention.macro_average) {
    double sum = 0;
    int n = 0;
    for (const auto& [_, t] : report.categories)
      if (t.accuracy()) sum += *t.accuracy(), ++n;
    if (n) report.macro_accuracy = sum / n;
  }
}

}  // namespace

ScoreReport score_predictions(const std::string& benchmark, AnswerRule rule, const std::vector<Stream>& streams,
                              const std::vector<Prediction>& predictions) {
  ScoreReport report;
  report.benchmark = benchmark;
  report.rule = rule;
  auto by_key = match_predictions(streams, predictions, report.unmatched_predictions, report.duplicate_predictions);

  std::map<std::string, Tally> by_category;
  std::vector<OvoBenchOutcome> ovobench_outcomes;
  for (const auto& s : streams)
    for (const auto& q : s.questions) {
      const Prediction* p = by_key[{s.id, q.id}];
      QuestionScore qs{s.id, q.id, q.category, "", "", std::nullopt, std::nullopt};
      judge_outcome(qs, rule, q, p, report);
      add_evidence_hit(qs, q, p, report.recall);
      if (!judged_by_rule(q)) {
        ++report.open_ended;
        report.open_ended_answered += qs.outcome == "open_ended";
      } else {
        add_outcome(report.overall, qs.outcome);
        for (const auto& c : q.categories.empty() ? std::vector<std::string>{q.category} : q.categories)
          if (!c.empty()) add_outcome(by_category[c], qs.outcome);
      }
      ovobench_outcomes.push_back({&q, qs.outcome == "correct" || qs.outcome == "wrong", qs.outcome == "correct"});
      report.questions.push_back(std::move(qs));
    }
  if (rule == AnswerRule::ovobench) report.ovobench = ovobench_summary(ovobench_outcomes);
  add_categories(report, std::move(by_category), table_convention(benchmark));
  return report;
}

void judge_open_ended(ScoreReport& report, const std::vector<Stream>& streams,
                      const std::vector<Prediction>& predictions, LlmJudge& judge, std::ostream* progress) {
  int64_t unmatched = 0, duplicates = 0;  // already counted by score_predictions
  const auto by_key = match_predictions(streams, predictions, unmatched, duplicates);
  std::map<QuestionKey, const Question*> questions;
  for (const auto& s : streams)
    for (const auto& q : s.questions) questions[{s.id, q.id}] = &q;

  JudgeTally tally;
  tally.model = judge.model();
  int64_t total = 0, done = 0;
  for (const auto& qs : report.questions) total += qs.outcome == "open_ended";
  auto count_done = [&] {
    ++done;
    if (progress && (done % 100 == 0 || done == total))
      *progress << "judge: " << done << " / " << total << " (" << tally.failed << " failed, " << tally.from_cache
                << " from the cache)\n";
  };
  for (auto& qs : report.questions) {
    if (qs.outcome != "open_ended") continue;
    const auto q = questions.find({qs.stream, qs.id});
    const auto p = by_key.find({qs.stream, qs.id});
    if (q == questions.end() || p == by_key.end() || !p->second)
      throw std::runtime_error("judge: question " + qs.stream + " " + qs.id +
                               " of the report is not in these streams and predictions");
    if (q->second->answer.empty()) {  // nothing to compare with (a stream_list question without a reference)
      ++tally.no_reference;
      count_done();
      continue;
    }
    Judgment j = judge.judge(q->second->text, q->second->answer, p->second->output);
    if (!j.ok) {
      ++tally.failed;
      if (progress)
        *progress << "judge: " << qs.stream << " " << qs.id << ": failed after " << j.attempts
                  << (j.attempts == 1 ? " try: " : " tries: ") << j.error << "\n";
    } else {
      tally.yes += j.verdict == JudgeVerdict::yes;
      tally.no += j.verdict == JudgeVerdict::no;
      tally.neither += j.verdict == JudgeVerdict::neither;
      tally.from_cache += j.cached;
      if (j.score) tally.score_sum += *j.score, ++tally.score_count;
    }
    qs.judgment = std::move(j);
    count_done();
  }
  report.judge = std::move(tally);
}

}  // namespace svqa
