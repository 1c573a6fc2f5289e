// The score report written out: the Markdown table (`svqa score`, a run's scores.md) and the JSON
// with every question's outcome (scores.json).
#include <iomanip>
#include <sstream>

#include <nlohmann/json.hpp>

#include "benchmarks/datasets/answer_parsing.h"
#include "benchmarks/scoring/scoring.h"
#include "benchmarks/scoring/table_convention.h"

namespace svqa {
namespace {

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

// The rule's table: one row per category in the official order, overall and M-Avg; then OVO-Bench's
// table, the proactive accuracies and what was left unscored.
void write_rule_table(std::ostringstream& s, const ScoreReport& r) {
  const TableConvention convention = table_convention(r.benchmark);
  auto label = [&](const std::string& name) {
    for (const auto& [row, abbreviation] : convention.rows)
      if (row == name && !abbreviation.empty()) return abbreviation + " — " + name;
    return name;
  };
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

// The LLM judge's table of the open-ended answers, or a line saying they need it.
void write_judge_table(std::ostringstream& s, const ScoreReport& r) {
  if (!r.judge) {
    if (r.open_ended)
      s << "- open-ended: " << r.open_ended << " questions, " << r.open_ended_answered
        << " answered; they need the GPT judge (not scored here)\n";
    return;
  }
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
}

}  // namespace

std::string score_markdown(const ScoreReport& r) {
  std::ostringstream s;
  s << "**" << r.benchmark << "** — answers judged by the " << rule_name(r.rule) << " rule\n\n";
  if (r.overall.questions) write_rule_table(s, r);
  write_judge_table(s, r);
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
