#include "benchmarks/prediction_records.h"

#include <stdexcept>

#include "core/io/json_lines.h"

namespace svqa {
namespace {

using nlohmann::json;

std::string id_text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

json timing_json(const RecordTiming& t) {
  return {{"encode_s", t.encode_s},   {"encode_frames", t.encode_frames}, {"retrieve_s", t.retrieve_s},
          {"prefill_s", t.prefill_s}, {"decode_s", t.decode_s},           {"ttft_s", t.ttft_s}};
}

json memory_json(const RecordMemory& m) {
  json by = json::object();
  for (const auto& [name, tb] : m.by_granularity) by[name] = {{"tokens", tb.first}, {"bytes", tb.second}};
  return {{"blocks", m.blocks},       {"tokens", m.tokens},
          {"ram_bytes", m.ram_bytes}, {"disk_bytes", m.disk_bytes},
          {"representative_bytes", m.representative_bytes}, {"by_granularity", by}};
}

// svqa's own fields, read when present and well-formed (other systems' files need not have them).
void read_svqa_fields(const json& j, PredictionRecord& r) {
  auto text = [&](const char* key, std::string& out) {
    if (j.contains(key) && j[key].is_string()) out = j[key].get<std::string>();
  };
  if (j.contains("time") && j["time"].is_number()) r.time = j["time"].get<double>();
  text("question", r.question);
  text("category", r.category);
  text("reference", r.reference);
  if (j.contains("options") && j["options"].is_array())
    for (const auto& o : j["options"])
      if (o.is_string()) r.options.push_back(o.get<std::string>());
  if (j.contains("prediction_ids") && j["prediction_ids"].is_array())
    for (const auto& id : j["prediction_ids"])
      if (id.is_number_integer()) r.output_ids.push_back(id.get<int64_t>());
  if (j.contains("context_tokens") && j["context_tokens"].is_array())
    for (const auto& c : j["context_tokens"])
      if (c.is_number()) r.context_tokens.push_back(c.get<int64_t>());
  if (j.contains("frames_encoded") && j["frames_encoded"].is_number()) r.frames_encoded = j["frames_encoded"].get<int64_t>();
  if (j.contains("timing") && j["timing"].is_object()) {
    const auto& t = j["timing"];
    RecordTiming timing;
    timing.encode_s = t.value("encode_s", 0.0);
    timing.encode_frames = t.value("encode_frames", int64_t{0});
    timing.retrieve_s = t.value("retrieve_s", 0.0);
    timing.prefill_s = t.value("prefill_s", 0.0);
    timing.decode_s = t.value("decode_s", 0.0);
    timing.ttft_s = t.value("ttft_s", timing.retrieve_s + timing.prefill_s);
    r.timing = timing;
  }
  if (j.contains("memory") && j["memory"].is_object()) {
    const auto& m = j["memory"];
    RecordMemory memory;
    memory.blocks = m.value("blocks", int64_t{0});
    memory.tokens = m.value("tokens", int64_t{0});
    memory.ram_bytes = m.value("ram_bytes", int64_t{0});
    memory.disk_bytes = m.value("disk_bytes", int64_t{0});
    memory.representative_bytes = m.value("representative_bytes", int64_t{0});
    if (m.contains("by_granularity") && m["by_granularity"].is_object())
      for (const auto& [name, tb] : m["by_granularity"].items())
        if (tb.is_object()) memory.by_granularity[name] = {tb.value("tokens", int64_t{0}), tb.value("bytes", int64_t{0})};
    r.memory = memory;
  }
  if (j.contains("retrieval_scores") && j["retrieval_scores"].is_array())
    for (const auto& p : j["retrieval_scores"])
      if (p.is_array() && p.size() == 2 && p[0].is_number() && p[1].is_number())
        r.retrieval_scores.emplace_back(p[0].get<double>(), p[1].get<double>());
  if (j.contains("letter") && j["letter"].is_string()) r.letter = j["letter"].get<std::string>();
  if (j.contains("correct") && j["correct"].is_boolean()) r.correct = j["correct"].get<bool>();
  if (j.contains("extra") && j["extra"].is_object()) r.extra = j["extra"];
}

}  // namespace

json to_json(const PredictionRecord& r) {
  json j = {{"stream", r.stream},     {"question_id", r.question_id},
            {"time", r.time ? json(*r.time) : json(nullptr)},
            {"question", r.question}, {"category", r.category}};
  if (!r.answered()) {
    j["error"] = r.error;
    return j;
  }
  json spans = json::object();
  for (const auto& [id, span] : r.block_spans) spans[std::to_string(id)] = {span.first, span.second};
  j.update({{"options", r.options},           {"reference", r.reference},
            {"prediction", r.output},         {"prediction_ids", r.output_ids},
            {"retrieved", r.retrieved},       {"block_spans", spans},
            {"context_tokens", r.context_tokens}, {"frames_encoded", r.frames_encoded}});
  if (r.timing) j["timing"] = timing_json(*r.timing);
  if (r.memory) j["memory"] = memory_json(*r.memory);
  if (!r.retrieval_scores.empty()) {
    json scores = json::array();
    for (const auto& [start, score] : r.retrieval_scores) scores.push_back({start, score});
    j["retrieval_scores"] = scores;
  }
  if (r.letter) j["letter"] = *r.letter;
  if (r.correct) j["correct"] = *r.correct;
  if (!r.extra.empty()) j["extra"] = r.extra;
  return j;
}

PredictionRecord prediction_from_json(const json& j, const std::string& where) {
  auto fail = [&](const std::string& field, const std::string& what) {
    throw std::runtime_error(where + ": " + field + ": " + what);
  };
  if (!j.is_object()) fail("(line)", "expected a JSON object");
  PredictionRecord r;
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
    } catch (const json::exception&) {
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
  read_svqa_fields(j, r);
  return r;
}

std::vector<PredictionRecord> prediction_records(const JsonLinesFile& file, const std::string& path) {
  std::vector<PredictionRecord> out;
  for (const auto& [n, j] : file.lines) {
    out.push_back(prediction_from_json(j, path + ":" + std::to_string(n)));
    out.back().line = n;
  }
  return out;
}

std::vector<PredictionRecord> read_prediction_records(const std::string& path) {
  return prediction_records(read_json_lines(path), path);
}

}  // namespace svqa
