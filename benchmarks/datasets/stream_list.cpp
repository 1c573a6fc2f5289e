#include "benchmarks/datasets/stream_list.h"

#include <filesystem>
#include <map>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "benchmarks/datasets/annotated_benchmark.h"
#include "core/io/json_text.h"

namespace svqa {

std::vector<Stream> StreamList::streams() {
  namespace fs = std::filesystem;
  const std::string& file = options_.annotations;
  nlohmann::json j = read_json_file(file);
  const fs::path root = options_.video_root.empty() ? fs::path(file).parent_path() : fs::path(options_.video_root);
  auto fail = [&](const std::string& where, const std::string& what) {
    throw std::runtime_error(file + ": " + where + ": " + what);
  };
  if (!j.is_object() || !j.contains("streams") || !j["streams"].is_array()) fail("streams", "expected a list");
  std::vector<Stream> out;
  std::map<std::string, std::string> stream_at;  // id → where; and per stream, question id → where
  for (size_t s = 0; s < j["streams"].size(); ++s) {
    const auto& js = j["streams"][s];
    const std::string where = "streams[" + std::to_string(s) + "]";
    auto text = [&](const nlohmann::json& o, const char* key, const std::string& at, bool required) -> std::string {
      if (!o.contains(key)) {
        if (required) fail(at + "." + key, "missing");
        return "";
      }
      if (!o[key].is_string()) fail(at + "." + key, "expected a string");
      if (o[key].get_ref<const std::string&>().size() > kMaxAnnotationTextBytes)
        fail(at + "." + key, "at most " + std::to_string(kMaxAnnotationTextBytes) + " bytes");
      return o[key].get<std::string>();
    };
    Stream stream{text(js, "id", where, true), (root / text(js, "video", where, true)).string(), {}};
    // Records, resuming and scores are keyed by (stream, question id): a repeat would never be asked.
    const auto repeat = [&](const std::string& kind, const std::string& id, const std::string& first) {
      fail(kind, nlohmann::json(id).dump() + " repeats " + first +
                     ": ids must be unique, or the second one is never asked and is scored with the first one's answer");
    };
    if (const auto [it, added] = stream_at.emplace(stream.id, where + ".id"); !added) repeat(where + ".id", stream.id, it->second);
    if (!js.contains("questions") || !js["questions"].is_array()) fail(where + ".questions", "expected a list");
    std::map<std::string, std::string> question_at;
    for (size_t q = 0; q < js["questions"].size(); ++q) {
      const auto& jq = js["questions"][q];
      const std::string at = where + ".questions[" + std::to_string(q) + "]";
      Question question;
      question.id = text(jq, "id", at, true);
      if (const auto [it, added] = question_at.emplace(question.id, at + ".id"); !added)
        repeat(at + ".id", question.id, it->second);
      question.text = text(jq, "question", at, true);
      if (!jq.contains("time") || !jq["time"].is_number() || jq["time"].get<double>() < 0)
        fail(at + ".time", "expected seconds ≥ 0");
      question.time = jq["time"].get<double>();
      if (jq.contains("options")) {
        if (!jq["options"].is_array()) fail(at + ".options", "expected a list of strings");
        for (const auto& o : jq["options"]) {
          if (!o.is_string() || o.get_ref<const std::string&>().size() > kMaxAnnotationTextBytes)
            fail(at + ".options", "expected a list of strings of at most " + std::to_string(kMaxAnnotationTextBytes) + " bytes");
          question.options.push_back(o.get<std::string>());
        }
        if (question.options.size() > kMaxOptions)
          fail(at + ".options", std::to_string(question.options.size()) + " options: at most " +
                                    std::to_string(kMaxOptions) + " (one per letter A to Z)");
      }
      question.answer = text(jq, "answer", at, false);
      question.category = text(jq, "category", at, false);
      stream.questions.push_back(std::move(question));
    }
    out.push_back(std::move(stream));
  }
  return out;
}

}  // namespace svqa
