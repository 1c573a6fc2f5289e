// Official benchmark loaders on the real sample files (../shared/reference/samples) and hand-made
// edge cases; each official answer parser on tricky outputs; the scorer's tables and recall.

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>

#include <unistd.h>

#include "benchmarks/answer_parsing.h"
#include "benchmarks/cgbench.h"
#include "benchmarks/clock_time.h"
#include "benchmarks/egoschema.h"
#include "benchmarks/llm_judge.h"
#include "benchmarks/lvbench.h"
#include "benchmarks/mlvu.h"
#include "benchmarks/rvs.h"
#include "benchmarks/scoring.h"
#include "benchmarks/streamingbench.h"
#include "benchmarks/videomme.h"
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

namespace {
Question mc(const std::string& id, const std::string& category, const std::string& gold_text,
            std::vector<std::pair<double, double>> evidence = {}) {
  Question q;
  q.id = id;
  q.category = category;
  q.options = {"a", "b", "c", "d"};
  q.answer = gold_text;
  q.evidence = std::move(evidence);
  return q;
}
PredictionRecord pred(const std::string& id, const std::string& output, const std::string& stream = "") {
  PredictionRecord p;
  p.question_id = id;
  p.output = output;
  p.stream = stream;
  return p;
}
}  // namespace

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
  PredictionRecord po = pred("o", "something");
  po.retrieved = {{1}, {2}};
  po.block_spans = {{1, {0, 2}}, {2, {19, 21}}};  // layer 1's block overlaps [10, 20]
  PredictionRecord pm = pred("m", "A)");
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
  const std::vector<PredictionRecord> predictions = {pred("1", "P1\n more"), pred("2", "P2"), pred("3", "P3"),
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
