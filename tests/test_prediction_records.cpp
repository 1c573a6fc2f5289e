// The prediction record: svqa's record survives to_json → record_from_json unchanged, every field
// of its one list included; other systems' files are read by their aliases; and every reader of
// JSON Lines applies one rule to a torn line.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <unistd.h>
#include <vector>

#include "app/run/prediction_record.h"
#include "benchmarks/scoring/predictions.h"
#include "core/io/json_lines.h"
#include "app/run/prediction_log.h"
#include "app/run/run_closing.h"
#include "core/io/unicode_text.h"

namespace svqa {
namespace {

std::string temp_file(const std::string& name, const std::string& content) {
  const auto p = std::filesystem::temp_directory_path() / ("svqa_test_" + std::to_string(getpid()) + "_" + name);
  std::ofstream(p, std::ios::binary) << content;
  return p.string();
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

PredictionRecord answered_record() {
  PredictionRecord r;
  r.stream = "s1";
  r.question_id = "q1";
  r.time = 21.0;
  r.question = "What color?";
  r.category = "color";
  r.options = {"red", "green"};
  r.reference = "red";
  r.output = "A) red";
  r.output_ids = {32, 7, 2};
  r.retrieved = {{0, 3}, {3}};
  r.block_spans = {{0, {0.0, 2.0}}, {3, {6.0, 8.0}}};
  r.context_tokens = {40, 22};
  r.frames_encoded = 11;
  r.timing = RecordTiming{0.5, 11, 0.25, 0.125, 1.0, 0.375};
  r.memory = RecordMemory{4, 36, 1024, 2048, 64, {{"frame", {36, 3072}}}, 30};
  r.retrieval_scores = {{0.0, 0.5}, {6.0, 1.25}};
  r.letter = "A";
  r.correct = true;
  r.extra = {{"streamkv", {{"segments", 3}}}};
  return r;
}

// Every field of a field list set to a value no other field has and no default equals, whatever
// its type: a field added to the list is filled here without a test edit.
struct Filler {
  int next = 1;
  void operator()(std::string& v) { v = "text" + std::to_string(next++); }
  void operator()(int64_t& v) { v = next++; }
  void operator()(double& v) { v = next++ + 0.5; }
  void operator()(bool& v) { v = true; }
  void operator()(nlohmann::json& v) { v = {{"strategy", {{"n", next++}}}}; }
  void operator()(std::pair<double, double>& v) { v = {next + 0.25, next + 0.75}, ++next; }
  template <class T>
  void operator()(std::optional<T>& v) { (*this)(v.emplace()); }
  template <class T>
  void operator()(std::vector<T>& v) { (*this)(v.emplace_back()), (*this)(v.emplace_back()); }
  template <class K, class V>
  void operator()(std::map<K, V>& m) {
    K key{};
    (*this)(key);
    (*this)(m[key]);
  }
  template <class T, class = decltype(T::fields(std::declval<T&>(), std::declval<void (*)(const char*, int&, Written)>()))>
  void operator()(T& s) {
    T::fields(s, [&](const char*, auto& value, Written) { (*this)(value); });
  }
};

}  // namespace

TEST_CASE("every field of the record's one list is written and read back", "[records]") {
  PredictionRecord r;
  Filler fill;
  PredictionRecord::fields(r, [&](const char*, auto& value, Written) { fill(value); });
  std::vector<std::string> answer_keys, error_keys;
  PredictionRecord::fields(r, [&](const char* key, auto&, Written when) {
    if (when != Written::error && when != Written::error_if_set) answer_keys.push_back(key);
    if (when == Written::always || when == Written::error || when == Written::error_if_set) error_keys.push_back(key);
  });
  const std::string error = r.error;
  r.error.clear();
  const nlohmann::json j = to_json(r);
  CHECK(j.size() == answer_keys.size());  // every field but "error" and "fault" written
  for (const auto& key : answer_keys) CHECK(j.contains(key));
  CHECK(to_json(record_from_json(j, "here")) == j);  // and every one read back as written

  r.error = error;
  const nlohmann::json e = to_json(r);
  CHECK(e.size() == error_keys.size());
  CHECK(to_json(record_from_json(e, "here")) == e);
}

TEST_CASE("a record field of the wrong type is named with its path", "[records]") {
  nlohmann::json j = to_json(answered_record());
  j["timing"]["prefill_s"] = "fast";
  CHECK_THROWS_WITH(record_from_json(j, "f:2"), "f:2: timing.prefill_s: expected a number, got \"fast\"");
  j = to_json(answered_record());
  j["block_spans"]["x"] = {1.0, 2.0};
  CHECK_THROWS_WITH(record_from_json(j, "f:2"), "f:2: block_spans.x: expected an integer key");
  j = to_json(answered_record());
  j.erase("prediction");
  CHECK_THROWS_WITH(record_from_json(j, "f:2"), Catch::StartsWith("f:2: prediction: missing"));
}

TEST_CASE("svqa's record is written and read through one type, field for field", "[records]") {
  const nlohmann::json j = to_json(answered_record());
  CHECK(j["prediction"] == "A) red");
  CHECK(j["block_spans"]["3"] == nlohmann::json::array({6.0, 8.0}));
  CHECK(j["timing"]["encode_frames"] == 11);
  CHECK(j["memory"]["by_granularity"]["frame"]["bytes"] == 3072);
  CHECK(j["extra"]["streamkv"]["segments"] == 3);
  CHECK(to_json(record_from_json(j, "here")) == j);

  PredictionRecord error = answered_record();
  error.error = "video not found";
  error.time.reset();
  const nlohmann::json e = to_json(error);
  CHECK(e == nlohmann::json{{"stream", "s1"}, {"question_id", "q1"}, {"time", nullptr}, {"question", "What color?"},
                            {"category", "color"}, {"error", "video not found"}});
  CHECK(to_json(record_from_json(e, "here")) == e);

  PredictionRecord plain = answered_record();
  plain.extra = nlohmann::json::object();
  CHECK_FALSE(to_json(plain).contains("extra"));  // written only when a strategy adds fields
}

TEST_CASE("other systems' predictions are read by their aliases", "[records]") {
  const auto r = prediction_from_json({{"id", 14}, {"response", "B"}, {"retrieved", {1, 2}}}, "f:3");
  CHECK(r.question_id == "14");
  CHECK(r.output == "B");
  CHECK(r.retrieved == std::vector<std::vector<int64_t>>{{1, 2}});
  CHECK_THROWS_WITH(prediction_from_json({{"prediction", "B"}}, "f:3"), Catch::StartsWith("f:3: question_id: missing"));
}

TEST_CASE("JSON Lines: a torn last line is left out, any other bad line names file and line", "[records]") {
  const std::string good = R"({"question_id": "a", "prediction": "x"})";
  const std::string torn = temp_file("torn.jsonl", good + "\n\n" + good.substr(0, 20));
  const JsonLinesFile t = read_json_lines(torn);
  CHECK(t.lines.size() == 1);
  CHECK(t.torn_line == 3);
  CHECK(t.kept_bytes == good.size() + 2);
  CHECK(read_prediction_records(torn).size() == 1);
  CHECK(read_predictions(torn).size() == 1);

  const std::string unterminated = temp_file("unterminated.jsonl", good + "\n" + good);  // whole, only its newline lost
  const JsonLinesFile u = read_json_lines(unterminated);
  CHECK(u.lines.size() == 2);
  CHECK(u.last_line_unterminated);
  CHECK(u.torn_line == 0);

  const std::string bad = temp_file("bad.jsonl", good + "\n{oops\n" + good + "\n");
  CHECK_THROWS_WITH(read_json_lines(bad), Catch::StartsWith(bad + ":2: not JSON"));
  CHECK_THROWS_WITH(read_prediction_records(bad), Catch::StartsWith(bad + ":2: not JSON"));
}

TEST_CASE("the prediction log resumes: a torn line is cut, a lost newline restored", "[records]") {
  PredictionRecord r = answered_record();
  const std::string line = to_json(r).dump();
  const std::string path = temp_file("log.jsonl", line + "\n" + line.substr(0, 30));
  {
    PredictionLog log(path);
    CHECK(log.records().size() == 1);
    CHECK(log.done("s1", "q1"));
    CHECK_FALSE(log.done("s1", "q2"));
    r.question_id = "q2";
    log.append(r);
  }
  CHECK(read_all(path) == line + "\n" + to_json(r).dump() + "\n");

  const std::string lost_newline = temp_file("log2.jsonl", line);
  {
    PredictionLog log(lost_newline);
    log.append(r);
  }
  CHECK(read_all(lost_newline) == line + "\n" + to_json(r).dump() + "\n");
}

TEST_CASE("the run table cuts answers and ids on UTF-8 boundaries", "[records]") {
  // A random-weight model's answer of U+FFFD characters was cut inside one by byte, and the table
  // that `svqa run` prints was then invalid UTF-8 (Python's subprocess refused to decode it).
  PredictionRecord r = answered_record();
  r.stream = "流";
  r.question_id = "问题问题问题问题问题问题";
  r.output = "\x14 left answer\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd";
  std::ostringstream table;
  print_run_table({r}, table);
  CHECK(utf8_lossy(table.str()) == table.str());
  CHECK(utf8_prefix("a\xef\xbf\xbd", 3) == "a");
  CHECK(utf8_prefix("a\xef\xbf\xbd", 4) == "a\xef\xbf\xbd");
  CHECK(utf8_prefix("abc", 10) == "abc");
}

}  // namespace svqa
