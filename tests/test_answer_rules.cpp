// Each official answer rule on tricky outputs (prompts, parsers, verdicts) and the scorer's tables
// and recall, on hand-made questions and predictions.

#include <catch2/catch.hpp>

#include "benchmarks/datasets/answer_parsing.h"
#include "benchmarks/scoring/predictions.h"
#include "benchmarks/scoring/scoring.h"
#include "tests/scoring_fixtures.h"

namespace svqa {

// ---------------------------------------------------------------------------------------------
// Prompts and parsers

TEST_CASE("prompts: ReKV's, StreamingBench's, CG-Bench's, Video-MME's, MLVU's", "[benchmarks]") {
  Question q;
  q.text = "What color?";
  q.options = {"Red", "Blue"};
  CHECK(format_question(AnswerRule::rekv, q) == "Question: What color?\nOptions:\n(A) Red\n(B) Blue\nOnly give the best option.");
  CHECK(answer_prefix(AnswerRule::rekv, q) == "Best option: (");
  CHECK(answer_prefix(AnswerRule::mlvu, q) == "Best Option: (");
  CHECK(answer_prefix(AnswerRule::streamingbench, q).empty());
  const std::string sb = format_question(AnswerRule::streamingbench, q);
  CHECK(sb.find("Question: What color?\n\nOptions:\nA. Red\nB. Blue\n\nThe best option is:") != std::string::npos);
  q.official_options = {"A. Red", "B. Blue"};
  CHECK(format_question(AnswerRule::videomme, q).substr(format_question(AnswerRule::videomme, q).find("What")) ==
        "What color?\nA. Red\nB. Blue\nThe best answer is:");
  const std::string cg = format_question(AnswerRule::cgbench, q);
  CHECK(cg.find("```json\n{\"result\": \"option\"}\n```") != std::string::npos);
  CHECK(cg.substr(cg.find("Question:")) == "Question: What color?\n\nA:Red\nB:Blue\n\n");
  CHECK(format_question(AnswerRule::mlvu, q).find("(B) Blue Only give the best option.") != std::string::npos);
  Question open;
  open.text = "What happens?";
  CHECK(format_question(AnswerRule::streamingbench, open) == "What happens?");
  CHECK(answer_prefix(AnswerRule::rekv, open).empty());
}

TEST_CASE("ReKV's letter rule on tricky outputs", "[benchmarks]") {
  CHECK(rekv_letter("B) Blue") == "B");
  CHECK(rekv_letter("(B)") == "B");
  CHECK(rekv_letter("  B.") == "B");
  CHECK(rekv_letter("The answer is C") == "T");
  CHECK(rekv_letter("b)") == "b");
  CHECK(rekv_letter(")") == "");
  CHECK(rekv_letter("") == "");
  CHECK(rekv_letter(" \n") == "");
}

TEST_CASE("StreamingBench, LVBench, Video-MME and MLVU parsers as their scripts", "[benchmarks]") {
  CHECK(streamingbench_letter("B. two") == "B");
  CHECK(streamingbench_letter(" B") == " ");  // the first character, unstripped
  CHECK(streamingbench_letter("") == "");

  CHECK(lvbench_letter("(D) 1633") == "D");
  CHECK(lvbench_letter("D) 1633") == "D");
  CHECK(lvbench_letter("The answer is (B)") == "B");
  CHECK(lvbench_letter("C") == "C");
  CHECK(lvbench_letter("The answer is C") == "T");
  CHECK(lvbench_letter("") == "");

  CHECK(videomme_letter("The best answer is: B") == "B");
  CHECK(videomme_letter("Answer: (C)") == "C");
  CHECK(videomme_letter("b") == "");
  CHECK(videomme_letter("The correct option is D") == "D");
  CHECK(videomme_letter("All of them") == "A");  // the first A-D anywhere, as the script
  CHECK(videomme_letter("this one has more than ten words in it and none of the four letters") == "");

  CHECK(mlvu_reading("B) Blue") == "B");
  CHECK(mlvu_reading(" C ") == "C");
  CHECK(mlvu_reading("Blue") == "Blue");
  CHECK(mlvu_reading(") x") == "");
}

TEST_CASE("CG-Bench: the JSON block first, then every standalone letter", "[benchmarks]") {
  CgBenchReading r = cgbench_reading("```json\n{\"result\": \"B\"}\n```");
  CHECK(r.from_json);
  CHECK(r.result == "B");
  r = cgbench_reading("Sure.\n```json\n{\"result\": C}\n```");  // bare identifier quoted
  CHECK(r.from_json);
  CHECK(r.result == "C");
  r = cgbench_reading("```json\n{\"result\": 3}\n```");
  CHECK(r.result == "3");
  r = cgbench_reading("```json\n{\"answer\": \"B\"}\n```  I pick A or E.");  // no result: letters
  CHECK_FALSE(r.from_json);
  CHECK(r.letters == std::vector<std::string>{"B", "A", "E"});
  CHECK(cgbench_reading("Apple is BIG").letters.empty());
  CHECK(cgbench_reading("").letters.empty());
  CHECK(cgbench_reading("答案：B").letters == std::vector<std::string>{"B"});

  Question q;
  q.options = {"a", "b", "c", "d", "e"};
  q.answer = "e";
  q.answer_letter = "E";
  CHECK(judge(AnswerRule::cgbench, q, "A or E").outcome == Verdict::Outcome::correct);  // lenient, as the script
  CHECK(judge(AnswerRule::cgbench, q, "```json\n{\"result\": \"A\"}\n``` E").outcome == Verdict::Outcome::wrong);
  CHECK(judge(AnswerRule::cgbench, q, "no idea").outcome == Verdict::Outcome::unanswered);
}

TEST_CASE("judge: which rules leave an output unanswered", "[benchmarks]") {
  Question q;
  q.options = {"a", "b", "c", "d"};
  q.answer = "b";
  CHECK(judge(AnswerRule::rekv, q, "B)").outcome == Verdict::Outcome::correct);
  CHECK(judge(AnswerRule::rekv, q, "").outcome == Verdict::Outcome::wrong);
  CHECK(judge(AnswerRule::streamingbench, q, "").outcome == Verdict::Outcome::unanswered);
  CHECK(judge(AnswerRule::videomme, q, "no idea").outcome == Verdict::Outcome::unanswered);
  CHECK(judge(AnswerRule::videomme, q, "The answer is B").outcome == Verdict::Outcome::correct);
  CHECK(judge(AnswerRule::lvbench, q, "").outcome == Verdict::Outcome::wrong);
  CHECK(judge(AnswerRule::mlvu, q, "b)").outcome == Verdict::Outcome::wrong);
  CHECK(rule_from_name("cgbench") == AnswerRule::cgbench);
  CHECK_FALSE(rule_from_name("nope"));
}

// ---------------------------------------------------------------------------------------------
// Scoring

using test::mc;
using test::pred;

TEST_CASE("scoring: per-category table, MLVU's M-Avg beside the micro average", "[benchmarks]") {
  const std::vector<Stream> streams = {
      {"v1", "v1.mp4", {mc("q1", "plotQA", "a"), mc("q2", "plotQA", "b"), mc("q3", "plotQA", "c")}, 0},
      {"v2", "v2.mp4", {mc("q4", "ego", "a")}, 0}};
  const auto r = score_predictions("mlvu", AnswerRule::rekv, streams,
                                   {pred("q1", "A)"), pred("q2", "A)"), pred("q3", "C)"), pred("q4", "A)"),
                                    pred("zz", "A")});
  CHECK(r.overall.correct == 3);
  CHECK(r.overall.scored() == 4);
  REQUIRE(r.categories.size() == 2);
  CHECK(r.categories[0].first == "ego");  // the official table's order: Needle, Ego, PlotQA, ...
  CHECK(*r.categories[1].second.accuracy() == Approx(2.0 / 3));
  CHECK(*r.macro_accuracy == Approx((1.0 + 2.0 / 3) / 2));
  CHECK(r.unmatched_predictions == 1);
  const std::string md = score_markdown(r);
  CHECK(md.find("| PlotQA — plotQA | 3 | 3 | 2 | 66.7 |") != std::string::npos);
  CHECK(md.find("| **M-Avg** (mean of the task accuracies) | | | | 83.3 |") != std::string::npos);
  CHECK(score_json(r).find("\"macro_accuracy\"") != std::string::npos);
}

TEST_CASE("scoring: multi-label categories, missing and unanswered left out, ambiguous ids", "[benchmarks]") {
  Question q1 = mc("1", "reasoning", "a");
  q1.categories = {"reasoning", "summarization"};
  const std::vector<Stream> streams = {{"v", "v.mp4", {q1, mc("2", "reasoning", "b"), mc("3", "reasoning", "c")}, 0}};
  const auto r = score_predictions("videomme", AnswerRule::videomme, streams, {pred("1", "A"), pred("2", "no idea")});
  CHECK(r.overall.correct == 1);
  CHECK(r.overall.unanswered == 1);
  CHECK(r.overall.missing == 1);
  CHECK(*r.overall.accuracy() == 1.0);
  REQUIRE(r.categories.size() == 2);
  CHECK(r.categories[1].first == "summarization");
  CHECK(r.categories[1].second.questions == 1);

  const std::vector<Stream> twice = {{"a", "a.mp4", {mc("0", "", "a")}, 0}, {"b", "b.mp4", {mc("0", "", "a")}, 0}};
  CHECK_THROWS_WITH(score_predictions("x", AnswerRule::rekv, twice, {pred("0", "A")}), Catch::Contains("give \"stream\""));
  CHECK(score_predictions("x", AnswerRule::rekv, twice, {pred("0", "A", "b")}).overall.correct == 1);
}

TEST_CASE("scoring: retrieval recall over the union of layers; open-ended questions not judged", "[benchmarks]") {
  Question open;
  open.id = "o";
  open.evidence = {{10, 20}};
  const std::vector<Stream> streams = {{"v", "v.mp4", {open, mc("m", "", "a", {{100, 110}})}, 0}};
  Prediction po = pred("o", "something");
  po.retrieved = {{1}, {2}};
  po.block_spans = {{1, {0, 2}}, {2, {19, 21}}};  // layer 1's block overlaps [10, 20]
  Prediction pm = pred("m", "A)");
  pm.retrieved = {{3}};
  pm.block_spans = {{3, {110, 110}}};  // one frame at the evidence's last second: overlaps
  const auto r = score_predictions("rvs_ego", AnswerRule::rekv, streams, {po, pm});
  CHECK(r.open_ended == 1);
  CHECK(r.open_ended_answered == 1);
  CHECK(r.recall.hits == 2);
  CHECK(r.recall.with_retrieval == 2);
  pm.block_spans = {{3, {112, 114}}};
  CHECK(score_predictions("rvs_ego", AnswerRule::rekv, streams, {po, pm}).recall.hits == 1);
}

// ---------------------------------------------------------------------------------------------
// The LLM judge of open-ended answers (the HTTP side end to end: tests/python/test_judge.py)

}  // namespace svqa
