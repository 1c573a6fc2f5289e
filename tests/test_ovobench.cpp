// OVO-Bench's loader on the real sample (../shared/reference/samples/ovobench_new.sample.json) and
// hand-made records: ask times, probe questions, golds, prompts (constant.py) and the rules.
// svqa score against the transcribed official scorer: tests/python/test_ovobench.py.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "benchmarks/datasets/answer_parsing.h"
#include "benchmarks/datasets/ovobench.h"
#include "benchmarks/datasets/ovobench_rules.h"
#include "benchmarks/scoring/results_export.h"

namespace svqa {
namespace {

namespace fs = std::filesystem;

std::vector<Stream> load_sample(std::vector<LoadProblem>& problems) {
  OvoBenchOptions o;
  o.annotations = (fs::path("..") / "shared/reference/samples/ovobench_new.sample.json").string();
  o.video_root = "/src_videos";
  return OvoBench(o).load(problems);
}

const Question& question(const std::vector<Stream>& streams, const std::string& id) {
  for (const auto& s : streams)
    for (const auto& q : s.questions)
      if (q.id == id) return q;
  FAIL("no question " << id);
  throw std::logic_error("unreachable");
}

std::string write_temp(const std::string& content) {
  const fs::path p = fs::temp_directory_path() / ("svqa_test_ovobench_" + std::to_string(::getpid()) + ".json");
  std::ofstream(p) << content;
  return p.string();
}

}  // namespace

TEST_CASE("OVO-Bench sample: streams, ask times at ceil(realtime), one question per probe", "[benchmarks]") {
  std::vector<LoadProblem> problems;
  const auto streams = load_sample(problems);
  for (const auto& p : problems) CHECK_FALSE(p.fatal);
  size_t questions = 0;
  for (const auto& s : streams) questions += s.questions.size();
  CHECK(questions == 64);  // 18 multiple choice + CRR 10 + SSR 29 + REC 7 probes

  const Question& fpd = question(streams, "1109");  // realtime 88.43: the official clip ends at 89
  CHECK(fpd.time == 89);
  CHECK(fpd.category == "FPD");
  CHECK(fpd.tags.at("group") == "realtime");
  CHECK(fpd.answer_letter.size() == 1);
  CHECK(fpd.answer == fpd.options[size_t(fpd.answer_letter[0] - 'A')]);

  const Question& rec = question(streams, "1558_2");  // test_info[2]: realtime 32.0, count 1
  CHECK(rec.time == 32);
  CHECK(rec.text == "How many times did they breaking something?");
  CHECK(rec.answer_letter == "1");
  CHECK(rec.options.empty());
  CHECK(judged_by_rule(rec));
  CHECK((rec.tags.at("item") == "1558" && rec.tags.at("probe") == "2" && rec.tags.at("group") == "forward"));

  const Question& ssr = question(streams, "1516_2");  // a step not yet performed: type 0
  CHECK(ssr.text == "put on the hair extensions");
  CHECK(ssr.answer_letter == "No");
  CHECK(ssr.time == 26);
  const Question& crr = question(streams, "1468_2");
  CHECK(crr.answer_letter == "Yes");
  CHECK(crr.text.find("The woman in a black coat") == 0);

  bool found = false;
  for (const auto& s : streams)
    if (s.id == "ec4a3ba3-eb00-4aa8-9b41-36043ece98f7") {
      found = true;
      CHECK(s.video == "/src_videos/Ego4D/clips/ec4a3ba3-eb00-4aa8-9b41-36043ece98f7.mp4");
      CHECK(s.questions.size() == 2);
    }
  CHECK(found);
}

TEST_CASE("OVO-Bench prompts are constant.py's templates as build_prompt fills them", "[benchmarks]") {
  Question mc;
  mc.category = "EPM";
  mc.text = "Who?";
  mc.options = {"a {x}", "b"};
  CHECK(format_question(AnswerRule::ovobench, mc) ==
        "\nQuestion: Who?\nOptions:\nA. a {x}; B. b;\n\nRespond only with the letter corresponding to your chosen "
        "option (e.g., A, B, C). \nDo not include any additional text or explanation in your response.\n");
  CHECK(answer_prefix(AnswerRule::ovobench, mc).empty());
  Question ssr;
  ssr.category = "SSR";
  ssr.text = "stir";
  CHECK(ovobench_prompt(ssr).find("The following is one step from the whole procedures: \nstir\nYour task") !=
        std::string::npos);
  CHECK(ovobench_prompt(ssr).find("Answer only with \u201cYes\u201d or \u201cNo\u201d.") != std::string::npos);
  Question rec;
  rec.category = "REC";
  rec.text = "How many times did they jump?";
  CHECK(ovobench_prompt(rec).find("Now, answer the following question: How many times did they jump?\nProvide") !=
        std::string::npos);
}

TEST_CASE("OVO-Bench rules: substring letter, joined digits, exact Y/N", "[benchmarks]") {
  using O = Verdict::Outcome;
  Question mc;
  mc.category = "ACR";
  mc.options = {"w", "x", "y", "z"};
  mc.answer_letter = "C";
  CHECK(judge(AnswerRule::ovobench, mc, "Correct: B").outcome == O::correct);  // the C of "Correct"
  CHECK(judge(AnswerRule::ovobench, mc, "Correct: B").parsed == "B,C");
  CHECK(judge(AnswerRule::ovobench, mc, "").outcome == O::wrong);  // never unanswered
  Question rec;
  rec.category = "REC";
  rec.answer_letter = "12";
  CHECK(judge(AnswerRule::ovobench, rec, "1 and 2").outcome == O::correct);
  CHECK(judge(AnswerRule::ovobench, rec, "12 (\u0663)").outcome == O::wrong);  // Arabic-Indic three is \d too
  CHECK(ovobench_digits("12 (\u0663)") == "12\u0663");
  Question crr;
  crr.category = "CRR";
  crr.answer_letter = "Yes";
  CHECK(judge(AnswerRule::ovobench, crr, "Y").outcome == O::correct);
  CHECK(judge(AnswerRule::ovobench, crr, "Y.").outcome == O::wrong);
  CHECK(judge(AnswerRule::ovobench, crr, "yes").outcome == O::wrong);
  crr.answer_letter = "No";
  CHECK(judge(AnswerRule::ovobench, crr, "Not sure").outcome == O::correct);
  CHECK(judge(AnswerRule::ovobench, crr, "Y").outcome == O::wrong);
}

TEST_CASE("OVO-Bench records that cannot be asked are named with their field", "[benchmarks]") {
  const std::string file = write_temp(R"([
    {"id": 1, "task": "XYZ", "video": "a/v.mp4"},
    {"id": 2, "task": "EPM", "video": "a/v.mp4", "realtime": 3, "question": "q", "options": ["a", "b"], "gt": 2},
    {"id": 3, "task": "SSR", "video": "b/v.mp4", "test_info": [{"realtime": 1, "step": "s", "type": 2}]},
    {"id": 4, "task": "REC", "video": "a/v.mp4", "activity": "jump", "test_info": [{"realtime": -1, "count": 1}]},
    {"id": 5, "task": "EPM", "video": "a/v.mp4", "realtime": 3, "question": "q", "options": ["a", "b"], "gt": 0,
     "answer": "b"}])");
  OvoBenchOptions o;
  o.annotations = file;
  std::vector<LoadProblem> problems;
  const auto streams = OvoBench(o).load(problems);
  auto has = [&](const std::string& where, const std::string& what, bool fatal) {
    for (const auto& p : problems)
      if (p.fatal == fatal && p.where.find(where) != std::string::npos && p.what.find(what) != std::string::npos)
        return true;
    return false;
  };
  CHECK(has("[0].task", "expected one of EPM", true));
  CHECK(has("[1].gt", "expected an integer from 0 to 1", true));
  CHECK(has("[2].test_info[0].type", "expected an integer from 0 to 1", true));
  CHECK(has("[3].test_info[0].realtime", "expected seconds >= 0", true));
  CHECK(has("[4].gt", "`answer` is option B: the official scorer uses gt", false));
  REQUIRE(streams.size() == 1);
  CHECK(streams[0].questions.size() == 1);
  CHECK_THROWS_WITH(OvoBench(o).streams(), Catch::Contains("[0].task"));
  fs::remove(file);
}

}  // namespace svqa

namespace svqa {

TEST_CASE("results export: a question with several predictions is counted, the last exported", "[benchmarks]") {
  std::vector<Prediction> records(4);
  records[0].question_id = "1", records[0].output = "A";
  records[1].question_id = "2", records[1].output = "B";
  records[2].question_id = "1", records[2].output = "C";  // a repeat that differs
  records[3].question_id = "2", records[3].output = "B";  // a repeat that agrees
  ExportCounts counts;
  const auto by_id = predictions_by_id(records, counts);
  CHECK(by_id.at("1")->output == "C");
  CHECK(counts.duplicates == 2);
  CHECK(counts.conflicting == 1);
  ExportCounts once;
  predictions_by_id({records[0], records[1]}, once);
  CHECK(once.duplicates == 0);
}

}  // namespace svqa
