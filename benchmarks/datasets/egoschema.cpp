#include "benchmarks/datasets/egoschema.h"

#include <map>

#include "benchmarks/datasets/rekv_json.h"

namespace svqa {

std::vector<Stream> EgoSchema::load(std::vector<LoadProblem>& problems) {
  std::map<std::string, int64_t> gold;
  if (!options_.answers.empty()) {
    AnnotationReader a(options_.answers, problems);
    const nlohmann::json j = a.read_json();
    if (!j.is_null() && !j.is_object()) a.fatal("(top level)", "expected {q_uid: option index}, got " + describe_json(j));
    if (j.is_object())
      for (const auto& [uid, index] : j.items()) {
        if (index.is_number_integer()) gold[uid] = index.get<int64_t>();
        else a.fatal(uid, "expected an option index 0-4, got " + describe_json(index));
      }
  }
  AnnotationReader r(options_.annotations, problems);
  const nlohmann::json j = r.read_json_list("questions");
  std::vector<Stream> out;
  if (!j.empty() && j[0].is_object() && j[0].contains("conversations")) {  // ReKV's full.json
    RekvJsonRules rules;
    rules.video_root = options_.video_root;
    out = read_rekv_json(r, rules);
  } else {
    UniqueIds ids;  // q_uid names a question (and its video) in the whole file
    for (size_t i = 0; i < j.size(); ++i) {
      const auto& jq = j[i];
      const std::string at = at_index("", i);
      if (!r.object(jq, at)) continue;
      const size_t fatal_before = r.fatal_count();
      Question q;
      q.id = r.text(jq, at, "q_uid").value_or("");
      q.text = r.text(jq, at, "question").value_or("");
      for (int k = 0; k < 5; ++k) q.options.push_back(r.text(jq, at, ("option " + std::to_string(k)).c_str()).value_or(""));
      if (r.fatal_count() != fatal_before) continue;
      ids.add(r, "", q.id, at_key(at, "q_uid"));
      out.push_back({q.id, resolve_video(options_.video_root, r.file(), q.id + options_.video_extension, 0), {}, 0});
      out.back().questions.push_back(std::move(q));
    }
  }
  std::vector<Stream> kept;
  for (auto& s : out) {
    std::vector<Question> questions;
    for (auto& q : s.questions) {
      q.offline = true;
      q.time = kAfterTheVideo;
      const auto it = gold.find(s.id);
      if (it != gold.end()) {
        if (it->second < 0 || it->second >= int64_t(q.options.size())) {
          problems.push_back({options_.answers + ": " + s.id, "option index out of range: " + std::to_string(it->second), true});
          continue;
        }
        q.answer = q.options[size_t(it->second)];
        q.answer_letter = option_letter(size_t(it->second));
      } else if (!gold.empty() && options_.subset_only) {
        continue;
      }
      questions.push_back(std::move(q));
    }
    s.questions = std::move(questions);
    if (!s.questions.empty()) kept.push_back(std::move(s));
  }
  return kept;
}

}  // namespace svqa
