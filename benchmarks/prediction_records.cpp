#include "benchmarks/prediction_records.h"

#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace svqa {
namespace {

std::string id_text(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

std::vector<PredictionRecord> read_prediction_records(const std::string& path, bool skip_torn_tail) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read the predictions file");
  std::vector<PredictionRecord> out;
  std::string line;
  for (size_t n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string at = path + ":" + std::to_string(n) + ": ";
    auto fail = [&](const std::string& field, const std::string& what) { throw std::runtime_error(at + field + ": " + what); };
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      if (skip_torn_tail && in.eof()) break;  // getline hit the end without a newline
      throw std::runtime_error(at + "not a JSON object: " + e.what());
    }
    if (!j.is_object()) fail("(line)", "expected a JSON object");
    PredictionRecord r;
    r.line = n;
    const char* id_key = j.contains("question_id") ? "question_id" : "id";
    if (!j.contains(id_key) || !(j[id_key].is_string() || j[id_key].is_number_integer()))
      fail("question_id", "missing (expected \"question_id\" or \"id\": a string or an integer)");
    r.question_id = id_text(j[id_key]);
    if (j.contains("stream")) {
      if (!j["stream"].is_string() && !j["stream"].is_number_integer()) fail("stream", "expected a string");
      r.stream = id_text(j["stream"]);
    }
    if (j.contains("error") && !j["error"].is_null()) {
      r.error = j["error"].is_string() ? j["error"].get<std::string>() : j["error"].dump();
      if (r.error.empty()) r.error = "error";
    } else {
      const char* key = j.contains("prediction") ? "prediction" : j.contains("response") ? "response" : "output";
      if (!j.contains(key)) fail("prediction", "missing (expected \"prediction\", \"response\" or \"output\": the model's text)");
      if (!j[key].is_string()) fail(key, "expected a string");
      r.output = j[key].get<std::string>();
    }
    if (j.contains("retrieved") && j["retrieved"].is_array()) {
      const auto& ret = j["retrieved"];
      const bool flat = !ret.empty() && ret[0].is_number_integer();
      try {
        if (flat) r.retrieved.push_back(ret.get<std::vector<int64_t>>());
        else r.retrieved = ret.get<std::vector<std::vector<int64_t>>>();
      } catch (const nlohmann::json::exception&) {
        fail("retrieved", "expected block ids per layer (a list of lists of integers) or one list of integers");
      }
    }
    if (j.contains("block_spans")) {
      if (!j["block_spans"].is_object()) fail("block_spans", "expected {\"id\": [start, end]}");
      for (const auto& [id, span] : j["block_spans"].items()) {
        if (!span.is_array() || span.size() != 2 || !span[0].is_number() || !span[1].is_number())
          fail("block_spans." + id, "expected [start, end] in seconds");
        try {
          r.block_spans[std::stoll(id)] = {span[0].get<double>(), span[1].get<double>()};
        } catch (const std::exception&) {
          fail("block_spans." + id, "expected an integer block id");
        }
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace svqa
