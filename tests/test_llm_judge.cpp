// The LLM judge of open-ended answers: reply parsing, messages, options, cache and bounded retries.

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include "benchmarks/scoring/llm_judge.h"
#include "benchmarks/scoring/scoring.h"
#include "core/config/experiment.h"
#include "tests/scoring_fixtures.h"
#include "tests/strategy_fixtures.h"

namespace svqa {
namespace {

// A file with this content in a fresh temporary directory.
std::string write_temp(const std::string& name, const std::string& content) {
  const std::string dir = test::temp_dir("judge");
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/" + name) << content;
  return dir + "/" + name;
}

}  // namespace

using test::mc;
using test::pred;

TEST_CASE("judge replies: the reference script's reading, tolerant of quotes and prose", "[judge]") {
  auto reply = parse_judge_reply("{'pred': 'yes', 'score': 4.8}");
  CHECK(reply.parsed);
  CHECK(reply.verdict == JudgeVerdict::yes);
  CHECK(reply.score == 4);  // int(4.8): truncation
  reply = parse_judge_reply(R"({"pred": "no", "score": 1})");
  CHECK(reply.verdict == JudgeVerdict::no);
  CHECK(reply.score == 1);
  reply = parse_judge_reply("{'prev': 'yes', 'score': 5}");  // the script's fallback key
  CHECK(reply.parsed);
  CHECK(reply.verdict == JudgeVerdict::yes);
  CHECK(parse_judge_reply("{'pred': 'Yes', 'score': 3}").verdict == JudgeVerdict::yes);
  CHECK(parse_judge_reply("{'pred': 'no', 'score': 0}").score == 0);
  CHECK(parse_judge_reply("{'pred': 'not sure', 'score': 2}").verdict == JudgeVerdict::no);  // "no" occurs
  reply = parse_judge_reply("{'pred': 'partially', 'score': 2}");
  CHECK(reply.parsed);
  CHECK(reply.verdict == JudgeVerdict::neither);
  CHECK(parse_judge_reply("{'pred': 'yes', 'score': '3'}").score == 3);  // a quoted number
  CHECK(parse_judge_reply(R"({"pred": "yes", "score": "2.5"})").score == 2);
  CHECK(parse_judge_reply("{'pred': 'yes', 'score': -0.5}").score == 0);  // toward zero, as int()
  reply = parse_judge_reply("Sure! Here is my evaluation:\n{'pred': 'no', 'score': 2}\nHope this helps.");
  CHECK(reply.parsed);
  CHECK(reply.verdict == JudgeVerdict::no);
  CHECK(reply.score == 2);
  reply = parse_judge_reply("{'pred': 'yes'}");  // no score: judged, not in the mean score
  CHECK(reply.parsed);
  CHECK_FALSE(reply.score);
  CHECK_FALSE(parse_judge_reply("{'pred': 'yes', 'score': 'high'}").score);
  CHECK_FALSE(parse_judge_reply("The answer is correct. Score: 4").parsed);
  CHECK_FALSE(parse_judge_reply("{'score': 4}").parsed);
  CHECK_FALSE(parse_judge_reply("{'pred': yes, 'score': 4}").parsed);  // not a string value
  CHECK_FALSE(parse_judge_reply("").parsed);
}

TEST_CASE("judge messages: the reference strings, newlines removed from the prediction", "[judge]") {
  CHECK(judge_system_message().find("how you can accomplish the task:------##INSTRUCTIONS: - Focus") !=
        std::string::npos);
  const std::string user = judge_user_message("Q?", "A.", "line one\nline two\n");
  CHECK(user.rfind("Please evaluate the following video-based question-answer pair:\n\nQuestion: Q?\nCorrect Answer: "
                   "A.\nPredicted Answer: line oneline two\n\nProvide your evaluation only as a yes/no",
                   0) == 0);
  CHECK(user.find("value of 'pred' is  a string of 'yes' or 'no'") != std::string::npos);
  CHECK(user.find("not STRING.DO NOT PROVIDE") != std::string::npos);
  const std::string end = "look like this: {'pred': 'yes', 'score': 4.8}.";
  CHECK(user.substr(user.size() - end.size()) == end);
}

namespace {
// Sets or unsets an environment variable for one scope.
struct ScopedEnv {
  std::string name;
  std::optional<std::string> old;
  ScopedEnv(std::string n, const char* value) : name(std::move(n)) {
    if (const char* v = std::getenv(name.c_str())) old = v;
    value ? ::setenv(name.c_str(), value, 1) : ::unsetenv(name.c_str());
  }
  ~ScopedEnv() { old ? ::setenv(name.c_str(), old->c_str(), 1) : ::unsetenv(name.c_str()); }
};
}  // namespace

TEST_CASE("judge options: environment fallbacks and errors naming the key", "[judge]") {
  ScopedEnv url("OPENAI_BASE_URL", nullptr), model("SVQA_JUDGE_MODEL", nullptr);
  JudgeOptions o;
  CHECK(LlmJudge::resolved_base_url(o).empty());
  CHECK_THROWS_WITH(LlmJudge(o), Catch::Contains("judge.base_url"));
  o.base_url = "http://127.0.0.1:1/v1/";
  CHECK_THROWS_WITH(LlmJudge(o), Catch::Contains("judge.model") && Catch::Contains("$SVQA_JUDGE_MODEL"));
  {
    ScopedEnv from_env("SVQA_JUDGE_MODEL", "judge-from-env");
    const LlmJudge judge(o);
    CHECK(judge.model() == "judge-from-env");
    CHECK(judge.endpoint() == "http://127.0.0.1:1/v1/chat/completions");
  }
  o.model = "m";
  o.max_attempts = 0;
  CHECK_THROWS_WITH(LlmJudge(o), Catch::Contains("judge.max_attempts"));
  o.max_attempts = 1;
  o.timeout_s = 0;
  CHECK_THROWS_WITH(LlmJudge(o), Catch::Contains("judge.timeout_s"));
  ScopedEnv fallback_url("OPENAI_BASE_URL", "http://localhost:9/v1");
  o.base_url.clear();
  o.timeout_s = 1;
  CHECK(LlmJudge(o).endpoint() == "http://localhost:9/v1/chat/completions");
}

TEST_CASE("judge: cached judgments need no server; failures are bounded, reported and not cached", "[judge]") {
  // Port 1 on the loopback: nothing listens, so every request is a connection error.
  JudgeOptions o;
  o.base_url = "http://127.0.0.1:1/v1";
  o.model = "judge-m";
  o.max_attempts = 2;
  o.backoff_s = 0;
  o.timeout_s = 2;
  const std::string cache_text =
      R"({"model": "judge-m", "question": "Q1?", "answer": "A1.", "prediction": "P1 more", "reply": "{'pred': 'yes', 'score': 4.8}"})"
      "\n"
      R"({"model": "other-judge", "question": "Q2?", "answer": "A2.", "prediction": "P2", "reply": "{'pred': 'yes', 'score': 5}"})"
      "\n"
      R"({"model": "judge-m", "question": "Q3?", "answer": "A3.", "predi)";  // the last line torn by a crash
  o.cache = write_temp("judge_cache.jsonl", cache_text);
  LlmJudge judge(o);
  CHECK(judge.cached_judgments() == 2);
  CHECK(judge.cache_lines_skipped() == 1);

  const Judgment cached = judge.judge("Q1?", "A1.", "P1\n more");  // the key has the newlines removed
  CHECK(cached.ok);
  CHECK(cached.cached);
  CHECK(cached.attempts == 0);
  CHECK(cached.verdict == JudgeVerdict::yes);
  CHECK(cached.score == 4);

  const Judgment failed = judge.judge("Q2?", "A2.", "P2");  // cached for another judge model only
  CHECK_FALSE(failed.ok);
  CHECK_FALSE(failed.cached);
  CHECK(failed.attempts == 2);
  CHECK_THAT(failed.error, Catch::StartsWith("connection error"));

  Question q1, q2, q3;
  q1.id = "1", q1.text = "Q1?", q1.answer = "A1.";
  q2.id = "2", q2.text = "Q2?", q2.answer = "A2.";
  q3.id = "3", q3.text = "Q3?";  // no reference answer: not judged
  const std::vector<Stream> streams = {{"v", "v.mp4", {q1, q2, q3, mc("4", "", "a")}, 0}};
  const std::vector<Prediction> predictions = {pred("1", "P1\n more"), pred("2", "P2"), pred("3", "P3"),
                                                     pred("4", "A)")};
  ScoreReport report = score_predictions("rvs_ego", AnswerRule::rekv, streams, predictions);
  const std::string unjudged = score_markdown(report);
  CHECK(unjudged.find("they need the GPT judge (not scored here)") != std::string::npos);
  CHECK(score_json(report).find("\"judge\"") == std::string::npos);  // reports without judging are unchanged

  std::ostringstream progress;
  judge_open_ended(report, streams, predictions, judge, &progress);
  REQUIRE(report.judge);
  const JudgeTally& t = *report.judge;
  CHECK(t.model == "judge-m");
  CHECK(t.yes == 1);
  CHECK(t.failed == 1);
  CHECK(t.no_reference == 1);
  CHECK(t.from_cache == 1);
  CHECK(*t.accuracy() == 1.0);
  CHECK(*t.mean_score() == 4.0);
  CHECK(progress.str().find("judge: v 2: failed after 2 tries: connection error") != std::string::npos);
  CHECK(progress.str().find("judge: 3 / 3 (1 failed, 1 from the cache)") != std::string::npos);
  REQUIRE(report.questions[1].judgment);
  CHECK_FALSE(report.questions[1].judgment->ok);
  CHECK_FALSE(report.questions[2].judgment);
  CHECK_FALSE(report.questions[3].judgment);  // multiple choice: scored by its rule
  CHECK(report.overall.correct == 1);

  const std::string md = score_markdown(report);
  CHECK(md.find("judged by `judge-m`") != std::string::npos);
  CHECK(md.find("| 3 | 3 | 1 | 1 | 0 | 0 | 1 | 100.0 | 4.00 |") != std::string::npos);
  CHECK(md.find("1 failed (no readable reply after every try") != std::string::npos);
  CHECK(md.find("1 answered without a reference answer") != std::string::npos);
  CHECK(md.find("not scored here") == std::string::npos);
  const std::string json = score_json(report);
  CHECK(json.find("\"verdict\": \"failed\"") != std::string::npos);
  CHECK(json.find("\"no_reference\": 1") != std::string::npos);

  std::ifstream cache(o.cache);  // failures are not cached
  CHECK(std::string(std::istreambuf_iterator<char>(cache), std::istreambuf_iterator<char>()) == cache_text);
}

}  // namespace svqa