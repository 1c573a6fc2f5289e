#include "benchmarks/scoring/scoring.h"

#include <algorithm>
#include <iomanip>
#include <map>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "benchmarks/datasets/answer_parsing.h"
#include "benchmarks/datasets/streamingbench_proactive.h"

namespace svqa {
namespace {

// How the official table of a benchmark lists its rows: order and short names.
struct TableConvention {
  std::vector<std::pair<std::string, std::string>> rows;  // category, abbreviation ("" none)
  bool macro_average = false;
};

TableConvention table_convention(const std::string& benchmark) {
  if (benchmark == "streamingbench")
    return {{{"Object Recognition", "OP"}, {"Causal Reasoning", "CR"}, {"Clips Summarize", "CS"},
             {"Attribute Recognition", "ATP"}, {"Event Understanding", "EU"}, {"Text-Rich Understanding", "TR"},
             {"Prospective Reasoning", "PR"}, {"Spatial Understanding", "SU"}, {"Action Recognition", "ACP"},
             {"Counting", "CT"}},
            false};
  if (benchmark == "lvbench")
    return {{{"entity recognition", "ER"}, {"event understanding", "EU"}, {"key information retrieval", "KIR"},
             {"temporal grounding", "TG"}, {"reasoning", "Rea"}, {"summarization", "Sum"}},
            false};
  if (benchmark == "mlvu")
    return {{{"findNeedle", "Needle"}, {"ego", "Ego"}, {"plotQA", "PlotQA"}, {"order", "Order"}, {"count", "Count"},
             {"topic_reasoning", "Topic"}, {"anomaly_reco", "Anomaly"}},
            true};
  if (benchmark == "ovobench")  // constant.py's order; the task names are the paper's abbreviations
    return {{{"EPM", ""}, {"ASI", ""}, {"HLD", ""}, {"OCR", ""}, {"ACR", ""}, {"ATR", ""}, {"STU", ""}, {"FPD", ""},
             {"OJR", ""}, {"REC", ""}, {"SSR", ""}, {"CRR", ""}},
            false};
  if (benchmark == "videomme")
    return {{{"Temporal Perception", ""}, {"Spatial Perception", ""}, {"Attribute Perception", ""},
             {"Action Recognition", ""}, {"Object Recognition", ""}, {"OCR Problems", ""}, {"Counting Problem", ""},
             {"Temporal Reasoning", ""}, {"Spatial Reasoning", ""}, {"Action Reasoning", ""},
             {"Object Reasoning", ""}, {"Information Synopsis", ""}},
            false};
  return {};
}

bool overlaps(const std::pair<double, double>& block, const std::vector<std::pair<double, double>>& evidence) {
  for (const auto& [a, b] : evidence)
    if (block.first <= b && block.second >= a) return true;  // both closed: a block spans its first to last frame
  return false;
}

std::string percent(std::optional<double> v) {
  if (!v) return "–";
  std::ostringstream s;
  s << std::fixed << std::setprecision(1) << *v * 100;
  return s.str();
}

std::string two_decimals(std::optional<double> v) {
  if (!v) return "–";
  std::ostringstream s;
  s << std::fixed << std::setprecision(2) << *v;
  return s.str();
}

nlohmann::json optional_json(std::optional<double> v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

nlohmann::json judgment_json(const Judgment& j) {
  nlohmann::json out = {{"verdict", j.ok ? verdict_name(j.verdict) : "failed"},
                        {"score", j.score ? nlohmann::json(*j.score) : nlohmann::json(nullptr)},
                        {"reply", j.reply},
                        {"attempts", j.attempts},
                        {"cached", j.cached}};
  if (!j.ok) out["error"] = j.error;
  return out;
}

nlohmann::json judge_tally_json(const JudgeTally& t) {
  return {{"model", t.model},
          {"judged", t.judged()},
          {"yes", t.yes},
          {"no", t.no},
          {"neither", t.neither},
          {"failed", t.failed},
          {"no_reference", t.no_reference},
          {"from_cache", t.from_cache},
          {"accuracy", optional_json(t.accuracy())},
          {"score_sum", t.score_sum},
          {"score_count", t.score_count},
          {"score", optional_json(t.mean_score())}};
}

nlohmann::json tally_json(const Tally& t) {
  return {{"questions", t.questions}, {"scored", t.scored()},     {"correct", t.correct},
          {"wrong", t.wrong},         {"unanswered", t.unanswered}, {"missing", t.missing},
          {"errored", t.errored},     {"no_gold", t.no_gold},
          {"accuracy", t.accuracy() ? nlohmann::json(*t.accuracy()) : nlohmann::json(nullptr)}};
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

// score.py prints percentages with two decimals: so here, to compare figure for figure.
std::string percent2(std::optional<double> v) { return v ? two_decimals(*v * 100) : "–"; }

std::string ovobench_markdown(const OvoBenchSummary& o) {
  std::ostringstream s;
  s << "OVO-Bench (utils/OVOBenchScore.py): task = mean over its entries, a forward task's probes pooled; group = mean "
       "of its tasks; total = mean of the three groups. per item: each record's probes averaged first (issue #7)\n\n"
    << "| task | group | items | entries | correct | score (%) | per item (%) |\n|---|---|---:|---:|---:|---:|---:|\n";
  for (const auto& t : o.tasks)
    s << "| " << t.task << " | " << t.group << " | " << t.items << " | " << t.scored << " | " << t.correct << " | "
      << percent2(t.score.pooled) << " | " << percent2(t.score.per_item) << " |\n";
  for (const auto& g : o.groups)
    s << "| **" << g.group << " avg.** | | | | | " << percent2(g.score.pooled) << " | " << percent2(g.score.per_item)
      << " |\n";
  s << "| **total avg.** | | | | | " << percent2(o.total.pooled) << " | " << percent2(o.total.per_item) << " |\n";
  return s.str();
}

nlohmann::json ovobench_json(const OvoBenchSummary& o) {
  auto mean_json = [](const OvoBenchMean& m) {
    return nlohmann::json{{"score", optional_json(m.pooled)}, {"per_item", optional_json(m.per_item)}};
  };
  nlohmann::json tasks = nlohmann::json::array(), groups = nlohmann::json::array();
  for (const auto& t : o.tasks) {
    auto j = mean_json(t.score);
    j.update({{"task", t.task}, {"group", t.group}, {"items", t.items}, {"entries", t.scored}, {"correct", t.correct}});
    tasks.push_back(std::move(j));
  }
  for (const auto& g : o.groups) {
    auto j = mean_json(g.score);
    j["group"] = g.group;
    groups.push_back(std::move(j));
  }
  return {{"tasks", tasks}, {"groups", groups}, {"total", mean_json(o.total)}};
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

ScoreReport score_predictions(const std::string& benchmark, AnswerRule rule, const std::vector<Stream>& streams,
                              const std::vector<Prediction>& predictions) {
  ScoreReport report;
  report.benchmark = benchmark;
  report.rule = rule;
  auto by_key = match_predictions(streams, predictions, report.unmatched_predictions, report.duplicate_predictions);

  const TableConvention convention = table_convention(benchmark);
  std::map<std::string, Tally> by_category;
  std::vector<OvoBenchOutcome> ovobench_outcomes;
  for (const auto& s : streams)
    for (const auto& q : s.questions) {
      const Prediction* p = by_key[{s.id, q.id}];
      QuestionScore qs{s.id, q.id, q.category, "", "", std::nullopt, std::nullopt};
      if (!p) qs.outcome = "missing";
      else if (!p->error.empty()) qs.outcome = "errored";
      else if (!judged_by_rule(q)) qs.outcome = "open_ended";
      else if (is_proactive(q)) {  // count.py's proactive rule: the last turn's time and answer
        const Verdict v = proactive_verdict(q, p->time, p->output);
        qs.parsed = v.parsed;
        qs.outcome = v.outcome == Verdict::Outcome::correct ? "correct"
                     : v.outcome == Verdict::Outcome::wrong ? "wrong"
                                                            : "unanswered";
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
        qs.outcome = v.outcome == Verdict::Outcome::correct ? "correct"
                     : v.outcome == Verdict::Outcome::wrong ? "wrong"
                                                            : "unanswered";
      }
      if (!q.evidence.empty()) {
        ++report.recall.with_evidence;
        if (p && !p->retrieved.empty()) {
          bool hit = false;
          for (const auto& layer : p->retrieved)
            for (const int64_t id : layer) {
              const auto span = p->block_spans.find(id);
              hit = hit || (span != p->block_spans.end() && overlaps(span->second, q.evidence));
            }
          ++report.recall.with_retrieval;
          report.recall.hits += hit;
          qs.evidence_hit = hit;
        }
      }
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

std::string score_markdown(const ScoreReport& r) {
  const TableConvention convention = table_convention(r.benchmark);
  auto label = [&](const std::string& name) {
    for (const auto& [row, abbreviation] : convention.rows)
      if (row == name && !abbreviation.empty()) return abbreviation + " — " + name;
    return name;
  };
  std::ostringstream s;
  s << "**" << r.benchmark << "** — answers judged by the " << rule_name(r.rule) << " rule\n\n";
  if (r.overall.questions) {
    s << "| category | questions | scored | correct | accuracy (%) |\n|---|---:|---:|---:|---:|\n";
    auto row = [&](const std::string& name, const Tally& t) {
      s << "| " << name << " | " << t.questions << " | " << t.scored() << " | " << t.correct << " | "
        << percent(t.accuracy()) << " |\n";
    };
    for (const auto& [name, t] : r.categories) row(label(name), t);
    row("**overall**", r.overall);
    if (r.macro_accuracy) s << "| **M-Avg** (mean of the task accuracies) | | | | " << percent(r.macro_accuracy) << " |\n";
    s << "\n";
    if (r.ovobench) s << ovobench_markdown(*r.ovobench) << "\n";
    if (r.proactive) {
      const ProactiveTally& p = *r.proactive;
      auto share = [&](int64_t n) { return percent(p.scored ? std::optional<double>(double(n) / p.scored) : std::nullopt); };
      s << "- proactive output (count.py): time accuracy " << share(p.time_correct) << " % (" << p.time_correct << " / "
        << p.scored << " last turns within ±2 s of the ground truth), answer accuracy " << share(p.answer_correct)
        << " % (" << p.answer_correct << " also contain the ground-truth output)\n";
    }
    const Tally& t = r.overall;
    s << "- not scored: " << t.unanswered << " unanswered (left out by the rule), " << t.missing
      << " without a prediction, " << t.errored << " errored, " << t.no_gold << " without a gold answer\n";
  }
  if (r.judge) {
    const JudgeTally& j = *r.judge;
    if (r.overall.questions) s << "\n";  // after the bullets of the multiple-choice table
    s << "**open-ended**, judged by `" << j.model
      << "` (Video-ChatGPT prompt; compare only runs judged by the same model)\n\n"
      << "| questions | answered | judged | yes | no | neither | failed | accuracy (%) | score (0–5) |\n"
      << "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
      << "| " << r.open_ended << " | " << r.open_ended_answered << " | " << j.judged() << " | " << j.yes << " | "
      << j.no << " | " << j.neither << " | " << j.failed << " | " << percent(j.accuracy()) << " | "
      << two_decimals(j.mean_score()) << " |\n\n"
      << "- accuracy = yes / (yes + no); score = mean of int(score) over the " << j.score_count
      << " judged replies with a score; " << j.from_cache << " judgments from the cache\n";
    if (j.no_reference) s << "- " << j.no_reference << " answered without a reference answer: not judged\n";
    if (j.failed)
      s << "- " << j.failed << " failed (no readable reply after every try; in neither number): "
        << "rerun to retry them (the judged ones are cached)\n";
  } else if (r.open_ended) {
    s << "- open-ended: " << r.open_ended << " questions, " << r.open_ended_answered
      << " answered; they need the GPT judge (not scored here)\n";
  }
  if (r.recall.with_evidence)
    s << "- retrieval recall (a block retrieved at any layer overlaps the evidence): " << r.recall.hits << " / "
      << r.recall.with_retrieval << " = " << percent(r.recall.recall()) << " %"
      << (r.recall.with_retrieval < r.recall.with_evidence
              ? " (" + std::to_string(r.recall.with_evidence - r.recall.with_retrieval) +
                    " questions with evidence have no retrieval record)"
              : std::string())
      << "\n";
  if (r.unmatched_predictions) s << "- " << r.unmatched_predictions << " predictions match no question\n";
  if (r.duplicate_predictions) s << "- " << r.duplicate_predictions << " questions have several predictions: the last counts\n";
  return s.str();
}

std::string score_json(const ScoreReport& r) {
  nlohmann::json categories = nlohmann::json::array();
  for (const auto& [name, t] : r.categories) {
    auto c = tally_json(t);
    c["category"] = name;
    categories.push_back(std::move(c));
  }
  nlohmann::json questions = nlohmann::json::array();
  for (const auto& q : r.questions) {
    nlohmann::json j = {{"stream", q.stream}, {"question_id", q.id}, {"category", q.category},
                        {"outcome", q.outcome}, {"parsed", q.parsed}};
    if (q.evidence_hit) j["evidence_hit"] = *q.evidence_hit;
    if (q.judgment) j["judge"] = judgment_json(*q.judgment);
    questions.push_back(std::move(j));
  }
  nlohmann::json j = {
      {"benchmark", r.benchmark},
      {"rule", rule_name(r.rule)},
      {"overall", tally_json(r.overall)},
      {"categories", categories},
      {"macro_accuracy", r.macro_accuracy ? nlohmann::json(*r.macro_accuracy) : nlohmann::json(nullptr)},
      {"open_ended", {{"questions", r.open_ended}, {"answered", r.open_ended_answered}}},
      {"retrieval_recall",
       {{"definition", "a block retrieved at any layer overlaps an evidence interval"},
        {"questions_with_evidence", r.recall.with_evidence},
        {"with_retrieval", r.recall.with_retrieval},
        {"hits", r.recall.hits},
        {"recall", r.recall.recall() ? nlohmann::json(*r.recall.recall()) : nlohmann::json(nullptr)}}},
      {"unmatched_predictions", r.unmatched_predictions},
      {"duplicate_predictions", r.duplicate_predictions},
      {"questions", questions}};
  if (r.judge) j["open_ended"]["judge"] = judge_tally_json(*r.judge);
  if (r.ovobench) j["ovobench"] = ovobench_json(*r.ovobench);
  if (r.proactive)
    j["proactive"] = {{"scored", r.proactive->scored}, {"time_correct", r.proactive->time_correct},
                      {"answer_correct", r.proactive->answer_correct}};
  // Judge replies are any text a server sent: replace bad UTF-8 rather than throw.
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace svqa
