// Proactive polling (app/run/proactive_polling.h) on a tiny random LLaVA-OneVision export: polls of
// two questions interleave in time order over one memory, the first "yes" asks the question at that
// poll's time and ends that question's polling, the other polls on to its last time; each poll is
// causal and timed; every frame is encoded once. And the yes rule and count.py's verdict.

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include "benchmarks/datasets/streamingbench_proactive.h"
#include "app/run/proactive_polling.h"
#include "models/backbones/torchscript_backbone.h"
#include "strategies/encoding/register_builtin.h"
#include "strategies/kit/rekv_sliding_window.h"
#include "strategies/retrieval/internal/internal.h"
#include "tests/strategy_fixtures.h"

#ifndef SVQA_TINY_EXPORTS
#error "SVQA_TINY_EXPORTS must name the directory the CTest fixture exports tiny backbones to"
#endif

namespace svqa {
namespace {

// Says yes on its `yes_at`-th poll (1-based), whatever the model answered; count.py's verdict.
class YesOnCall final : public Benchmark {
 public:
  explicit YesOnCall(int yes_at) : yes_at_(yes_at) {}
  std::vector<Stream> streams() override { return {}; }
  std::string question_text(const Question& q) const override { return q.text; }
  std::string answer_prefix(const Question&) const override { return ""; }
  Verdict verdict(const Question& q, const std::string& output) const override { return proactive_verdict(q, q.time, output); }
  bool has_gold(const Question& q) const override { return is_proactive(q); }
  bool poll_says_yes(const std::string&) const override { return ++calls_ == yes_at_; }

 private:
  int yes_at_;
  mutable int calls_ = 0;
};

Question proactive(const std::string& id, const std::vector<double>& polls, double gt) {
  Question q;
  q.id = id;
  q.text = "When it turns red, output \"red\".";
  q.poll_text = proactive_poll_query(q.text, "red");
  q.poll_times = polls;
  q.time = polls.front();
  q.answer = q.answer_letter = "red";
  q.category = "Proactive Output";
  q.tags["ground_truth_time"] = std::to_string(gt);
  return q;
}

}  // namespace

TEST_CASE("the official yes rule and count.py's proactive verdict", "[proactive]") {
  YesOnCall never(0);
  const Benchmark& official = never;
  struct Said { const char* output; bool yes; };
  for (const Said s : {Said{"Yes.", true}, {"YES", true}, {" yes", true}, {"eyes", true}, {"No, yes", true},
                       {"No", false}, {"", false}, {"Y", false}, {"ye s", false}, {"ＹＥＳ", false}})
    CHECK(official.Benchmark::poll_says_yes(s.output) == s.yes);
  const Question q = proactive("q", {11, 12}, 20);
  CHECK(proactive_verdict(q, 18, "red").outcome == Verdict::Outcome::correct);
  CHECK(proactive_verdict(q, 22, "it is red").outcome == Verdict::Outcome::correct);
  CHECK(proactive_verdict(q, 22.5, "red").parsed == "off time");
  CHECK(proactive_verdict(q, 17, "red").outcome == Verdict::Outcome::wrong);
  CHECK(proactive_verdict(q, 20, "Red").outcome == Verdict::Outcome::wrong);
  CHECK(proactive_verdict(q, 20, "Red").parsed == "on time");
  CHECK(proactive_verdict(q, std::nullopt, "red").outcome == Verdict::Outcome::unanswered);
  CHECK(proactive_poll_times(20, 29) == std::vector<double>{21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33});
  CHECK(proactive_poll_times(20, 16).empty());
}

TEST_CASE("a question asking for hours of polls is named with its count before the model loads", "[proactive]") {
  // StreamingBench polls once a second from the question to its ground truth + 4 s: 360k polls is a
  // ground truth 100 hours after the question (an annotation in milliseconds read as seconds).
  auto polls = [](double from, int64_t count) {
    std::vector<double> times;
    for (int64_t k = 0; k < count; ++k) times.push_back(from + static_cast<double>(k));
    return times;
  };
  Stream stream;
  stream.id = "v1";
  stream.questions = {proactive("few", polls(11, 13), 20), proactive("many", polls(21, kManyPolls + 1), 20)};
  std::ostringstream log;
  check_poll_counts({stream}, log);
  CHECK(log.str() == "warning: proactive question v1/many asks for 3601 polls (21 s to 3621 s), each a model call\n");

  stream.questions.push_back(proactive("broken", polls(5, 360000), 20));
  log.str("");
  try {
    check_poll_counts({stream}, log);
    FAIL("360000 polls accepted");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()) == "proactive question v1/broken asks for 360000 polls (5 s to 360004 s), each a model "
                                   "call: more than 86400 (a day of once-a-second polls); check its annotation");
  }
}

TEST_CASE("proactive polls interleave over one memory and stop at the first yes", "[tiny_backbone]") {
  at::InferenceMode inference;
  TorchScriptBackbone backbone(std::string(SVQA_TINY_EXPORTS) + "/llava_onevision", at::kCPU);
  RekvSlidingWindow encoder(RekvOptions{1000000});
  InternalRetrieval retrieval({2, 1, "dot"});
  YesOnCall benchmark(3);  // polls in order: a@3, a@4, b@4 (yes), a@5, a@6, a@7
  const auto sinks = backbone.tokenizer().encode("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n");
  StreamEncoding stream(backbone, encoder, retrieval, held_frame_reader(test::random_frames(12, 48, 48, 1.0)), sinks,
                        test::cpu_bank(backbone.num_layers()), 4, FrameRule::Exclusive, 1.0);
  const QuestionStep step{backbone, encoder, builtin_encoder_traits("rekv_sliding_window", RekvOptions{1000000}),
                          retrieval, benchmark, "{question}<|im_end|>\n<|im_start|>assistant\n",
                          {std::nullopt, 2}, false, 0};
  const auto dir = std::filesystem::temp_directory_path() / ("svqa_proactive_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const PredictionLog log((dir / "predictions.jsonl").string());
  std::vector<PredictionRecord> records;
  const std::vector<Question> questions{proactive("a", {3, 4, 5, 6, 7}, 3), proactive("b", {4, 5, 6}, 4)};
  run_polled_stream(step, stream, "s", questions, log,
                    {[&](double t) { return stream.encode_until(t); }, [&](const PredictionRecord& r) { records.push_back(r); }});
  std::filesystem::remove_all(dir);

  REQUIRE(records.size() == 2);
  const PredictionRecord &b = records[0], &a = records[1];  // b finished first, at its yes
  CHECK(b.question_id == "b");
  CHECK(b.extra["answered"] == 4.0);
  CHECK(b.time == 4.0);
  REQUIRE(b.extra["dialog_history"].size() == 4);  // the poll and the question, each a user and a model turn
  CHECK(b.extra["dialog_history"][2]["content"] == questions[1].text);
  CHECK(b.extra["dialog_history"][0]["content"] == questions[1].poll_text);
  CHECK(b.output == b.extra["dialog_history"][3]["content"].get<std::string>());
  CHECK(b.correct == (b.output.find("red") != std::string::npos));  // on time (gt 4 s): the answer decides
  CHECK(a.question_id == "a");
  CHECK(a.extra["answered"] == false);
  CHECK(a.time == 7.0);
  CHECK(a.correct == false);  // never yes: its last turn, the poll at 7 s, is 4 s after the ground truth
  std::vector<double> times;
  for (const auto& t : a.extra["dialog_history"]) times.push_back(t["time"].get<double>());
  CHECK(times == std::vector<double>{3, 3, 4, 4, 5, 5, 6, 6, 7, 7});
  for (const auto* r : {&a, &b})
    for (const auto& t : r->extra["dialog_history"]) {
      if (t["role"] != "assistant") continue;
      CHECK(t["ttft_s"].get<double>() > 0);
      REQUIRE(!t["block_spans"].empty());
      for (const auto& span : t["block_spans"]) CHECK(span[1].get<double>() < t["time"].get<double>());
    }
  CHECK(stream.encoded() == 7);  // frames 0..6: those before 7 s at 1 fps (exclusive), the last poll's
  CHECK(a.timing->encode_frames + b.timing->encode_frames == stream.encoded());  // each frame once
}

}  // namespace svqa
