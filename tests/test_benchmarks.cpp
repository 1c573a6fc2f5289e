// Official benchmark loaders on the real sample files (../shared/reference/samples) and hand-made
// edge cases. Answer rules and scoring: test_answer_rules.cpp; the LLM judge: test_llm_judge.cpp.

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>

#include <unistd.h>

#include "benchmarks/datasets/answer_parsing.h"
#include "benchmarks/datasets/cgbench.h"
#include "benchmarks/datasets/clock_time.h"
#include "benchmarks/datasets/egoschema.h"
#include "benchmarks/datasets/lvbench.h"
#include "benchmarks/datasets/mlvu.h"
#include "benchmarks/datasets/rvs.h"
#include "benchmarks/datasets/streamingbench.h"
#include "benchmarks/datasets/videomme.h"
#include "core/config/experiment.h"

namespace svqa {
namespace {

namespace fs = std::filesystem;

// The sample annotation files beside the repository (CI clones ../shared next to it).
std::string sample(const std::string& name) { return (fs::path("..") / "shared/reference/samples" / name).string(); }

// A file with this content in a fresh temporary directory.
std::string write_temp(const std::string& name, const std::string& content) {
  static int n = 0;
  const fs::path dir = fs::temp_directory_path() / ("svqa_test_benchmarks_" + std::to_string(::getpid())) /
                       std::to_string(n++);
  fs::create_directories(dir);
  std::ofstream(dir / name) << content;
  return (dir / name).string();
}

size_t count_questions(const std::vector<Stream>& streams) {
  size_t n = 0;
  for (const auto& s : streams) n += s.questions.size();
  return n;
}

const Question& find_question(const std::vector<Stream>& streams, const std::string& id) {
  for (const auto& s : streams)
    for (const auto& q : s.questions)
      if (q.id == id) return q;
  FAIL("no question " << id);
  throw std::logic_error("unreachable");
}

bool has_problem(const std::vector<LoadProblem>& problems, const std::string& where, const std::string& what,
                 bool fatal = false) {
  for (const auto& p : problems)
    if (p.fatal == fatal && p.where.find(where) != std::string::npos && p.what.find(what) != std::string::npos)
      return true;
  return false;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Loaders on the real samples

TEST_CASE("StreamingBench sample: videos, times, prefixes stripped, malformed stamps", "[benchmarks]") {
  StreamingBenchOptions o;
  o.annotations = sample("streamingbench_questions_real.sample.json");
  o.video_root = "/videos";
  StreamingBench bench(o);
  std::vector<LoadProblem> problems;
  const auto streams = bench.load(problems);
  REQUIRE(streams.size() == 3);
  CHECK(streams[0].id == "sample_348_real");
  CHECK(streams[0].video == "/videos/sample_348_real.mp4");
  CHECK(count_questions(streams) == 15);
  CHECK(bench.answer_rule() == AnswerRule::streamingbench);

  const Question& first = find_question(streams, "sample_348_real_0");
  CHECK(first.time == 31);
  CHECK(first.category == "Clips Summarize");
  CHECK(first.options[0] == "The individual organized serving trays and sanitized the preparation area.");
  CHECK(first.official_options[0].rfind("A. The individual organized", 0) == 0);
  CHECK(first.answer_letter == "C");
  CHECK(first.answer == first.options[2]);
  CHECK_FALSE(first.offline);
  CHECK(first.tags.at("required_ability") == "episodic memory");

  // "00:12450" (sample_132): read as 0:12:45 and noted; "00:24" (sample_242): MM:SS, 24 s.
  CHECK(find_question(streams, "sample_132_real_4").time == 12 * 60 + 45);
  CHECK(has_problem(problems, "[7].questions[1].time_stamp", "malformed time_stamp \"00:12450\" read as 0:12:45"));
  CHECK(find_question(streams, "sample_242_real_0").time == 24);
  CHECK(has_problem(problems, "[8].questions[0].time_stamp", "MM:SS"));
  // 0:04:13 asked for the window 0:04:18-0:04:48.
  CHECK(has_problem(problems, "[10].questions[0].time_stamp", "outside its window"));
  for (const auto& p : problems) CHECK_FALSE(p.fatal);
  CHECK_NOTHROW(bench.streams());
}

TEST_CASE("StreamingBench malformed stamps: drop or the official rule", "[benchmarks]") {
  StreamingBenchOptions o;
  o.annotations = sample("streamingbench_questions_real.sample.json");
  o.malformed_stamps = "drop";
  auto dropped = StreamingBench(o).streams();
  CHECK(count_questions(dropped) == 14);
  o.malformed_stamps = "official";
  CHECK(find_question(StreamingBench(o).streams(), "sample_132_real_4").time == 12450);
  o.rule = "rekv";
  CHECK(StreamingBench(o).answer_rule() == AnswerRule::rekv);

  CHECK(read_streamingbench_stamp("0:04:13", "fix").seconds == 253);
  CHECK(read_streamingbench_stamp("00:00:8", "fix").seconds == 8);
  CHECK(read_streamingbench_stamp("00:00:8", "fix").note.find("one-digit") != std::string::npos);
  CHECK(read_streamingbench_stamp("12:34", "fix").seconds == 754);
  CHECK_FALSE(read_streamingbench_stamp("soon", "fix").seconds);
  CHECK(clock_interval("[0:00:00 - 0:00:10]") == std::make_pair(0.0, 10.0));
  CHECK(clock_interval("0:02:00 - 0:02:20") == std::make_pair(120.0, 140.0));
  CHECK(clock_interval("[0:01:00 - 0:01:30\xe3\x80\x91") == std::make_pair(60.0, 90.0));  // closed by 】
  CHECK(clock_interval("00:15-00:19") == std::make_pair(15.0, 19.0));
}

TEST_CASE("StreamingBench stream variant and missing fields name file, record and field", "[benchmarks]") {
  const std::string file = write_temp("questions_real_stream.json", R"([
    {"video_path": "./videos/sample_1_real.mp4", "questions": [
      {"task_type": "Counting", "question": "How many?", "time_stamp": "0:01:05", "answer": "B",
       "options": ["A. one", "B. two", "C. three", "D. four"], "audio_path": "a.wav", "time": "[0:01:00 - 0:01:10]"},
      {"task_type": "Counting", "question": "How many now?", "answer": "A",
       "options": ["A. one", "B. two", "C. three", "D. four"]},
      {"task_type": "Counting", "question": "And now?", "time_stamp": "0:02:00", "answer": "E",
       "options": ["A. one", "B. two", "C. three", "D. four"]}]}])");
  StreamingBenchOptions o;
  o.annotations = file;
  StreamingBench bench(o);
  std::vector<LoadProblem> problems;
  const auto streams = bench.load(problems);
  REQUIRE(count_questions(streams) == 1);
  CHECK(streams[0].questions[0].time == 65);
  CHECK(streams[0].questions[0].answer == "two");
  CHECK(has_problem(problems, file + ": [0].questions[1].time_stamp", "missing", true));
  CHECK(has_problem(problems, file + ": [0].questions[2].answer", "expected the letter of one of the 4 options", true));
  CHECK_THROWS_WITH(bench.streams(), Catch::Contains(file + ": [0].questions[1].time_stamp: missing"));
}

TEST_CASE("CG-Bench mini sample: offline, clues, 8 options, duplicated gold", "[benchmarks]") {
  CgBenchOptions o;
  o.annotations = sample("cgbench_mini.sample.json");
  o.video_root = "/cg";
  CgBench bench(o);
  std::vector<LoadProblem> problems;
  const auto streams = bench.load(problems);
  REQUIRE(streams.size() == 3);  // questions grouped by video, in order of first appearance
  CHECK(streams[0].id == "3ZpmN3-2-Zo");
  CHECK(streams[0].video == "/cg/3ZpmN3-2-Zo.mp4");
  CHECK(count_questions(streams) == 8);

  const Question& q14 = find_question(streams, "14");
  CHECK(q14.offline);
  CHECK(std::isinf(q14.time));
  CHECK(q14.answer == "White");
  CHECK(q14.answer_letter == "E");
  CHECK(q14.category == "Entity Perception");
  CHECK(q14.tags.at("domain") == "Art & Culture");
  CHECK(q14.evidence == std::vector<std::pair<double, double>>{{8, 11}});
  CHECK(find_question(streams, "346").options.size() == 8);
  CHECK(find_question(streams, "4").evidence[0].first == Approx(20.238202947699822));

  // qid 4424: FOWL at A and E, right_answer A.
  const Question& q4424 = find_question(streams, "4424");
  CHECK(q4424.answer_letter == "A");
  CHECK(has_problem(problems, "[5].choices", "are the same text \"FOWL\" and it is the gold answer"));
  CHECK(gold_letter(AnswerRule::cgbench, q4424) == "A");
  CHECK(gold_letter(AnswerRule::rekv, q4424) == "A");
}

TEST_CASE("RVS-Ego and RVS-Movie samples: asked at end_time, windows are evidence, .npy at 1 fps", "[benchmarks]") {
  RvsOptions o;
  o.annotations = sample("rvs_ego4d_oe.sample.json");
  o.video_root = "/rvs/ego";
  const auto ego = Rvs(o).streams();
  REQUIRE(ego.size() == 3);
  CHECK(count_questions(ego) == 57 + 31 + 99);
  CHECK(ego[0].video == "/rvs/ego/0fa75cb3-c4a0-4232-bdc4-15116ed39d88.mp4");
  const Question& q = ego[0].questions[0];
  CHECK(q.id == "0fa75cb3-c4a0-4232-bdc4-15116ed39d88_0");
  CHECK(q.time == 840);
  CHECK(q.evidence == std::vector<std::pair<double, double>>{{540, 840}});
  CHECK(q.options.empty());
  CHECK(q.answer == "It is in an outdoor field.");
  CHECK_FALSE(q.offline);

  o.annotations = sample("rvs_movienet_oe.sample.json");
  o.video_root = "/rvs/movie";
  const auto movie = Rvs(o).streams();
  REQUIRE(movie.size() == 3);
  CHECK(count_questions(movie) == 36 + 41 + 21);
  CHECK(movie[0].video == "/rvs/movie/tt0076759.npy");
  CHECK(movie[0].source_fps == 1);
  CHECK(movie[0].questions[0].time == 142);
}

TEST_CASE("MLVU sample (ReKV format): repeated video ids, last-match gold, empty options", "[benchmarks]") {
  MlvuOptions o;
  o.annotations = sample("mlvu_dev_debug_mc.sample.json");
  o.video_root = "/mlvu/videos";
  Mlvu bench(o);
  std::vector<LoadProblem> problems;
  const auto streams = bench.load(problems);
  REQUIRE(streams.size() == 4);
  CHECK(streams[0].id == "1_plotQA/movie101_16");
  CHECK(streams[0].video == "/mlvu/videos/1_plotQA/movie101_16.mp4");
  CHECK(streams[2].id == "7_topic_reasoning/movie101_16");
  CHECK(streams[1].id == "surveil_6");
  CHECK(count_questions(streams) == 9);
  const Question& shooting = streams[1].questions[0];
  CHECK(shooting.offline);
  CHECK(shooting.category == "anomaly_reco");
  CHECK(gold_letter(AnswerRule::mlvu, shooting) == "D");  // the official scorer: the last equal option
  CHECK(gold_letter(AnswerRule::rekv, shooting) == "A");  // ReKV: the first
  CHECK(has_problem(problems, "[3].conversations[1].choices[0]", "empty option text"));
  CHECK(bench.answer_rule() == AnswerRule::mlvu);
}

// ---------------------------------------------------------------------------------------------
// Hand-made files for the formats without samples

TEST_CASE("MLVU official task files in a directory; generation tasks skipped", "[benchmarks]") {
  const std::string plot = write_temp("1_plotQA.json", R"([
    {"video": "m1.mp4", "duration": 600, "question": "Q1?", "candidates": ["a", "b", "c", "d"], "answer": "c",
     "question_type": "plotQA"},
    {"video": "m1.mp4", "duration": 600, "question": "Q2?", "candidates": ["a", "b", "c", "d"], "answer": "a",
     "question_type": "plotQA"}])");
  const fs::path dir = fs::path(plot).parent_path();
  std::ofstream(dir / "9_summary.json") << R"([{"video": "s.mp4", "question": "Summarize.", "answer": "..."}])";
  MlvuOptions o;
  o.annotations = dir.string();
  o.video_root = "/v";
  std::vector<LoadProblem> problems;
  const auto streams = Mlvu(o).load(problems);
  REQUIRE(streams.size() == 1);
  CHECK(streams[0].id == "1_plotQA/m1");
  CHECK(streams[0].video == "/v/1_plotQA/m1.mp4");
  CHECK(streams[0].questions[1].id == "1_plotQA/m1_1");
  CHECK(streams[0].questions[0].answer_letter == "C");
  CHECK(has_problem(problems, "9_summary.json", "generation task"));
}

TEST_CASE("LVBench: options split out of the question, multi-label, time_reference", "[benchmarks]") {
  const std::string file = write_temp("video_info.meta.jsonl",
      R"({"key": "Cm73ma6Ibcs", "type": "cartoon", "qa": [{"uid": "55", "question": "What year appears?\n(A) 1636\n(B) 1366\n(C) 1363\n(D) 1633", "answer": "D", "question_type": ["key information retrieval", "reasoning"], "time_reference": "00:15-00:19"}], "video_info": {"duration_minutes": 61.09}}
{"key": "x2", "type": "sport", "qa": [{"uid": 7, "question": "No options here", "answer": "A", "question_type": ["reasoning"]}]}
)");
  LvBenchOptions o;
  o.annotations = file;
  o.video_root = "/lv";
  std::vector<LoadProblem> problems;
  const auto streams = LvBench(o).load(problems);
  REQUIRE(streams.size() == 2);
  CHECK(streams[0].video == "/lv/Cm73ma6Ibcs.mp4");
  const Question& q = streams[0].questions.at(0);
  CHECK(q.id == "55");
  CHECK(q.text == "What year appears?");
  CHECK(q.options == std::vector<std::string>{"1636", "1366", "1363", "1633"});
  CHECK(q.answer == "1633");
  CHECK(q.categories == std::vector<std::string>{"key information retrieval", "reasoning"});
  CHECK(q.evidence == std::vector<std::pair<double, double>>{{15, 19}});
  CHECK(q.offline);
  CHECK(has_problem(problems, file + ": [1].qa[0].question", "one line per option", true));
}

TEST_CASE("Video-MME: Hugging Face rows, the scorer template, duration split", "[benchmarks]") {
  const std::string rows = write_temp("videomme.jsonl",
      R"({"video_id": "001", "duration": "short", "domain": "Knowledge", "sub_category": "Astronomy", "videoID": "aaa", "question_id": "001-1", "task_type": "Counting Problem", "question": "How many?", "options": ["A. 1.", "B. 2.", "C. 3.", "D. 4."], "answer": "B"}
{"video_id": "601", "duration": "long", "domain": "Knowledge", "sub_category": "Astronomy", "videoID": "TGom0uiW130", "question_id": "601-1", "task_type": "Information Synopsis", "question": "What is it about?", "options": ["A. Planes.", "B. Cars.", "C. Boats.", "D. Trains."], "answer": "A"}
)");
  VideoMmeOptions o;
  o.annotations = rows;
  o.video_root = "/vm";
  auto streams = VideoMme(o).streams();
  REQUIRE(streams.size() == 1);  // long only
  CHECK(streams[0].video == "/vm/TGom0uiW130.mp4");
  const Question& q = streams[0].questions.at(0);
  CHECK(q.id == "601-1");
  CHECK(q.options[0] == "Planes.");
  CHECK(q.official_options[0] == "A. Planes.");
  CHECK(q.answer_letter == "A");
  CHECK(q.tags.at("duration") == "long");
  o.duration = "all";
  CHECK(VideoMme(o).streams().size() == 2);

  const std::string tpl = write_temp("template.json", R"([{"video_id": "602", "duration": "long", "domain": "Knowledge",
    "sub_category": "Law", "questions": [{"question_id": "602-1", "task_type": "OCR Problems", "question": "Q?",
    "options": ["A. w", "B. x", "C. y", "D. z"], "answer": "D", "response": ""}]}])");
  o.annotations = tpl;
  o.duration = "long";
  streams = VideoMme(o).streams();
  REQUIRE(count_questions(streams) == 1);
  CHECK(streams[0].video == "/vm/602.mp4");
  CHECK(streams[0].questions[0].answer == "z");
}

TEST_CASE("EgoSchema: questions with the subset answers", "[benchmarks]") {
  const std::string questions = write_temp("questions.json", R"([
    {"q_uid": "u1", "google_drive_id": "g", "question": "What?", "option 0": "a", "option 1": "b", "option 2": "c",
     "option 3": "d", "option 4": "e"},
    {"q_uid": "u2", "google_drive_id": "g", "question": "Why?", "option 0": "a", "option 1": "b", "option 2": "c",
     "option 3": "d", "option 4": "e"}])");
  const std::string answers = write_temp("subset_answers.json", R"({"u2": 3})");
  EgoSchemaOptions o;
  o.annotations = questions;
  o.answers = answers;
  o.video_root = "/ego";
  auto streams = EgoSchema(o).streams();
  REQUIRE(streams.size() == 1);
  CHECK(streams[0].video == "/ego/u2.mp4");
  CHECK(streams[0].questions[0].answer == "d");
  CHECK(streams[0].questions[0].answer_letter == "D");
  o.subset_only = false;
  CHECK(EgoSchema(o).streams().size() == 2);
}

TEST_CASE("CG-Bench: eight options, a bad right_answer and a missing field are errors", "[benchmarks]") {
  const std::string file = write_temp("cg.json", R"([
    {"qid": 1, "video_uid": "v", "question": "Q?", "answer": "h", "choices": ["a","b","c","d","e","f","g","h"],
     "right_answer": "H", "clue_intervals": [[1, 2], [5.5, 6]], "domain": "D", "sub_category": "S", "duration": 9},
    {"qid": 2, "video_uid": "v", "question": "Q?", "answer": "a", "choices": ["a","b"], "right_answer": "Z",
     "clue_intervals": [[1, 2]], "sub_category": "S"},
    {"qid": 3, "video_uid": "v", "answer": "a", "choices": ["a","b"], "right_answer": "A", "clue_intervals": [],
     "sub_category": "S"}])");
  CgBenchOptions o;
  o.annotations = file;
  std::vector<LoadProblem> problems;
  const auto streams = CgBench(o).load(problems);
  REQUIRE(count_questions(streams) == 1);
  CHECK(streams[0].questions[0].answer_letter == "H");
  CHECK(streams[0].questions[0].evidence.size() == 2);
  CHECK(has_problem(problems, file + ": [1].right_answer", "expected the letter of one of the 2 choices", true));
  CHECK(has_problem(problems, file + ": [2].question", "missing", true));
}

}  // namespace svqa
