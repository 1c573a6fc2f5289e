#include "benchmarks/datasets/stream_list.h"

#include <filesystem>
#include <map>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "benchmarks/datasets/annotated_benchmark.h"
#include "core/io/json_text.h"

namespace svqa {
namespace {

using nlohmann::json;

// Reads the fields of one stream_list file; each failure names the file and the field.
struct StreamListReader {
  const std::string& file;

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw std::runtime_error(file + ": " + where + ": " + what);
  }

  std::string text(const json& o, const char* key, const std::string& at, bool required) const {
    if (!o.contains(key)) {
      if (required) fail(at + "." + key, "missing");
      return "";
    }
    if (!o[key].is_string()) fail(at + "." + key, "expected a string");
    if (o[key].get_ref<const std::string&>().size() > kMaxAnnotationTextBytes)
      fail(at + "." + key, "at most " + std::to_string(kMaxAnnotationTextBytes) + " bytes");
    return o[key].get<std::string>();
  }

  // Records, resuming and scores are keyed by (stream, question id): a repeat would never be asked.
  void require_unique(std::map<std::string, std::string>& seen, const std::string& id, const std::string& at) const {
    if (const auto [it, added] = seen.emplace(id, at); !added)
      fail(at, json(id).dump() + " repeats " + it->second +
                   ": ids must be unique, or the second one is never asked and is scored with the first one's answer");
  }

  std::vector<std::string> options(const json& jq, const std::string& at) const {
    std::vector<std::string> out;
    if (!jq["options"].is_array()) fail(at + ".options", "expected a list of strings");
    for (const auto& o : jq["options"]) {
      if (!o.is_string() || o.get_ref<const std::string&>().size() > kMaxAnnotationTextBytes)
        fail(at + ".options", "expected a list of strings of at most " + std::to_string(kMaxAnnotationTextBytes) + " bytes");
      out.push_back(o.get<std::string>());
    }
    if (out.size() > kMaxOptions)
      fail(at + ".options", std::to_string(out.size()) + " options: at most " + std::to_string(kMaxOptions) +
                                " (one per letter A to Z)");
    return out;
  }

  // streams[s].questions[q]; `question_at` holds the stream's question ids read so far.
  Question question(const json& jq, const std::string& at, std::map<std::string, std::string>& question_at) const {
    Question question;
    question.id = text(jq, "id", at, true);
    require_unique(question_at, question.id, at + ".id");
    question.text = text(jq, "question", at, true);
    if (!jq.contains("time") || !jq["time"].is_number() || jq["time"].get<double>() < 0)
      fail(at + ".time", "expected seconds ≥ 0");
    question.time = jq["time"].get<double>();
    if (jq.contains("options")) question.options = options(jq, at);
    question.answer = text(jq, "answer", at, false);
    question.category = text(jq, "category", at, false);
    return question;
  }
};

}  // namespace

std::vector<Stream> StreamList::streams() {
  namespace fs = std::filesystem;
  const std::string& file = options_.annotations;
  json j = read_json_file(file);
  const fs::path root = options_.video_root.empty() ? fs::path(file).parent_path() : fs::path(options_.video_root);
  const StreamListReader r{file};
  if (!j.is_object() || !j.contains("streams") || !j["streams"].is_array()) r.fail("streams", "expected a list");
  std::vector<Stream> out;
  std::map<std::string, std::string> stream_at;  // id → where
  for (size_t s = 0; s < j["streams"].size(); ++s) {
    const auto& js = j["streams"][s];
    const std::string where = "streams[" + std::to_string(s) + "]";
    Stream stream{r.text(js, "id", where, true), (root / r.text(js, "video", where, true)).string(), {}};
    r.require_unique(stream_at, stream.id, where + ".id");
    if (!js.contains("questions") || !js["questions"].is_array()) r.fail(where + ".questions", "expected a list");
    std::map<std::string, std::string> question_at;  // question id → where
    for (size_t q = 0; q < js["questions"].size(); ++q)
      stream.questions.push_back(r.question(js["questions"][q], where + ".questions[" + std::to_string(q) + "]", question_at));
    out.push_back(std::move(stream));
  }
  return out;
}

}  // namespace svqa
