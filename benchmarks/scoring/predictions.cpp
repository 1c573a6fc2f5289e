#include "benchmarks/scoring/predictions.h"

#include <stdexcept>

#include "core/io/json_lines.h"

namespace svqa {
namespace {

using nlohmann::json;

std::string id_text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// Throws naming the line (`where`) and the field.
[[noreturn]] void bad_field(const std::string& where, const std::string& field, const std::string& what) {
  throw std::runtime_error(where + ": " + field + ": " + what);
}

// "retrieved" (block ids per layer, or one flat list) and "block_spans": what retrieval recall reads.
void read_retrieval(const json& j, const std::string& where, Prediction& r) {
  if (j.contains("retrieved") && j["retrieved"].is_array()) {
    const auto& ret = j["retrieved"];
    const bool flat = !ret.empty() && ret[0].is_number_integer();
    try {
      if (flat) r.retrieved.push_back(ret.get<std::vector<int64_t>>());
      else r.retrieved = ret.get<std::vector<std::vector<int64_t>>>();
    } catch (const json::exception&) {
      bad_field(where, "retrieved", "expected block ids per layer (a list of lists of integers) or one list of integers");
    }
  }
  if (!j.contains("block_spans")) return;
  if (!j["block_spans"].is_object()) bad_field(where, "block_spans", "expected {\"id\": [start, end]}");
  for (const auto& [id, span] : j["block_spans"].items()) {
    if (!span.is_array() || span.size() != 2 || !span[0].is_number() || !span[1].is_number())
      bad_field(where, "block_spans." + id, "expected [start, end] in seconds");
    try {
      r.block_spans[std::stoll(id)] = {span[0].get<double>(), span[1].get<double>()};
    } catch (const std::exception&) {
      bad_field(where, "block_spans." + id, "expected an integer block id");
    }
  }
}

// A proactive answer's "dialog_history" (in "extra" or at the top level) and whether it answered.
void read_dialog_history(const json& j, const std::string& where, Prediction& r) {
  const json* holder = j.contains("extra") && j["extra"].is_object() ? &j["extra"] : &j;
  if (!holder->contains("dialog_history")) holder = &j;
  if (!holder->contains("dialog_history")) return;
  const json& d = (*holder)["dialog_history"];
  if (!d.is_array()) bad_field(where, "dialog_history", "expected a list of turns");
  for (const auto& turn : d)
    if (!turn.is_object() || !turn.contains("content") || !turn.contains("time") || !turn["time"].is_number())
      bad_field(where, "dialog_history", "expected turns {role, content, time, ...}, got " + turn.dump());
  r.dialog_history = d;
  r.answered_at = holder->value("answered", json(false));
}

}  // namespace

Prediction prediction_from_json(const json& j, const std::string& where) {
  auto fail = [&](const std::string& field, const std::string& what) { bad_field(where, field, what); };
  if (!j.is_object()) fail("(line)", "expected a JSON object");
  Prediction r;
  const char* id_key = j.contains("question_id") ? "question_id" : "id";
  if (!j.contains(id_key)) fail("question_id", "missing (expected \"question_id\" or \"id\": a string or an integer)");
  if (!j[id_key].is_string() && !j[id_key].is_number_integer())
    fail(id_key, "expected a string or an integer, got " + j[id_key].dump());
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
  read_retrieval(j, where, r);
  if (j.contains("time") && !j["time"].is_null()) {
    if (!j["time"].is_number()) fail("time", "expected seconds (a number)");
    r.time = j["time"].get<double>();
  }
  read_dialog_history(j, where, r);
  return r;
}

std::vector<Prediction> read_predictions(const std::string& path) {
  std::vector<Prediction> out;
  for (const auto& [n, j] : read_json_lines(path).lines) {
    out.push_back(prediction_from_json(j, path + ":" + std::to_string(n)));
    out.back().line = n;
  }
  return out;
}

}  // namespace svqa
