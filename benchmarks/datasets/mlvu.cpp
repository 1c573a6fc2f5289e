#include "benchmarks/datasets/mlvu.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "benchmarks/datasets/rekv_json.h"

namespace svqa {
namespace {

namespace fs = std::filesystem;

// The official scorer (choice_bench.py, qa_template) maps the answer to the last equal candidate;
// an answer equal to none keeps index -1, so its gold is "(@)" (chr(ord('A') - 1)) and every
// prediction is scored wrong, never left out.
void set_official_gold(AnnotationReader& r, const std::string& at, Question& q) {
  if (q.options.empty()) return;
  const int last = find_option(q.options, q.answer, /*last=*/true);
  q.answer_letter = last >= 0 ? option_letter(static_cast<size_t>(last)) : "@";
  if (last < 0)
    r.note(at_key(at, "answer"), "the answer " + nlohmann::json(q.answer).dump() +
                                     " is not among the candidates: the official gold is (@), every answer is wrong");
}

// Candidates are strings; a number is read as its text (the official scorer compares str()).
std::optional<std::vector<std::string>> candidates(AnnotationReader& r, const nlohmann::json& o, const std::string& at) {
  const auto* v = r.list(o, at, "candidates");
  if (!v) return std::nullopt;
  std::vector<std::string> out;
  for (size_t i = 0; i < v->size(); ++i) {
    const auto& c = (*v)[i];
    if (c.is_string()) out.push_back(c.get<std::string>());
    else if (c.is_number()) out.push_back(c.dump());
    else {
      r.fatal(at_index(at_key(at, "candidates"), i), "expected a string, got " + describe_json(c));
      return std::nullopt;
    }
  }
  return out;
}

}  // namespace

std::vector<Stream> Mlvu::load_task_file(const std::string& file, std::vector<LoadProblem>& problems) {
  AnnotationReader r(file, problems);
  const nlohmann::json j = r.read_json();
  if (j.is_null()) return {};
  if (!j.is_array()) {
    r.fatal("(top level)", "expected a list, got " + describe_json(j));
    return {};
  }
  if (!j.empty() && j[0].is_object() && j[0].contains("conversations")) {  // ReKV's conversion
    RekvJsonRules rules;
    rules.video_root = options_.video_root;
    rules.video_path_keep = static_cast<int>(options_.video_path_keep);
    auto streams = read_rekv_json(r, rules);
    for (auto& s : streams)
      for (auto& q : s.questions) set_official_gold(r, "question " + q.id, q);
    return streams;
  }
  if (!j.empty() && j[0].is_object() && !j[0].contains("candidates")) {
    r.note("(top level)", "no candidates: a generation task, skipped");
    return {};
  }
  const std::string task = fs::path(file).stem().string();
  const fs::path root = options_.video_root.empty() ? fs::path(file).parent_path() : fs::path(options_.video_root);
  std::vector<Stream> out;
  std::map<std::string, size_t> stream_of_video;
  for (size_t i = 0; i < j.size(); ++i) {
    const auto& jq = j[i];
    const std::string at = at_index("", i);
    if (!r.object(jq, at)) continue;
    const size_t fatal_before = r.fatal_count();
    const auto video = r.text(jq, at, "video");
    Question q;
    q.text = r.text(jq, at, "question").value_or("");
    q.options = candidates(r, jq, at).value_or(std::vector<std::string>{});
    q.answer = r.text(jq, at, "answer").value_or("");
    q.category = r.text(jq, at, "question_type").value_or("");
    if (r.fatal_count() != fatal_before) continue;
    set_official_gold(r, at, q);
    check_options(r, at, q, "candidates");
    q.offline = true;
    q.time = kAfterTheVideo;
    auto [it, added] = stream_of_video.emplace(*video, out.size());
    if (added) out.push_back({task + "/" + fs::path(*video).stem().string(), (root / task / *video).string(), {}, 0});
    Stream& s = out[it->second];
    q.id = s.id + "_" + std::to_string(s.questions.size());
    s.questions.push_back(std::move(q));
  }
  return out;
}

std::vector<Stream> Mlvu::load(std::vector<LoadProblem>& problems) {
  if (!fs::is_directory(options_.annotations)) return load_task_file(options_.annotations, problems);
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(options_.annotations))
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  if (files.empty()) problems.push_back({options_.annotations, "no .json task files in this directory", true});
  std::vector<Stream> out;
  for (const auto& f : files)
    for (auto& s : load_task_file(f, problems)) out.push_back(std::move(s));
  return out;
}

}  // namespace svqa
