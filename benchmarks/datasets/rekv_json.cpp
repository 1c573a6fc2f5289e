#include "benchmarks/datasets/rekv_json.h"

#include <filesystem>
#include <map>

#include "benchmarks/datasets/annotated_benchmark.h"

namespace svqa {
namespace {

// question_type is a string in most files and an integer in some.
std::string category_of(AnnotationReader& r, const nlohmann::json& c, const std::string& at) {
  if (!c.contains("question_type") || c["question_type"].is_null()) return "";
  const auto& t = c["question_type"];
  if (t.is_string()) return t.get<std::string>();
  if (t.is_number_integer()) return t.dump();
  r.fatal(at_key(at, "question_type"), "expected a string or an integer, got " + describe_json(t));
  return "";
}

Question read_conversation(AnnotationReader& r, const nlohmann::json& c, const std::string& at,
                           const RekvJsonRules& rules, bool& ok) {
  const size_t fatal_before = r.fatal_count();
  Question q;
  if (!r.object(c, at)) {
    ok = false;
    return q;
  }
  q.text = r.text(c, at, "question").value_or("");
  if (c.contains("answer") && !c["answer"].is_null()) q.answer = r.text(c, at, "answer").value_or("");
  if (c.contains("choices") && !c["choices"].is_null()) q.options = r.texts(c, at, "choices").value_or(std::vector<std::string>{});
  q.category = category_of(r, c, at);
  const auto start = r.number(c, at, "start_time", false);
  const auto end = r.number(c, at, "end_time", rules.streaming);
  if (rules.streaming) {
    q.time = end.value_or(0);
    if (end && *end < 0) r.fatal(at_key(at, "end_time"), "expected seconds >= 0, got " + c["end_time"].dump());
  } else {
    q.offline = true;
    q.time = kAfterTheVideo;
  }
  if (rules.window_is_evidence && start && end) {
    if (*start > *end) r.note(at_key(at, "start_time"), "the window ends before it starts");
    q.evidence.emplace_back(*start, *end);
  }
  if (c.contains("temporal_windows"))
    for (const auto& w : r.intervals(c, at, "temporal_windows").value_or(std::vector<std::pair<double, double>>{}))
      q.evidence.push_back(w);
  if (!q.options.empty()) {
    if (c.contains("answer") && c["answer"].is_null()) r.note(at_key(at, "answer"), "null: no gold answer (not scored)");
    check_options(r, at, q, "choices");
  }
  ok = r.fatal_count() == fatal_before;
  return q;
}

}  // namespace

std::vector<Stream> read_rekv_json(AnnotationReader& r, const RekvJsonRules& rules) {
  const nlohmann::json j = r.read_json_list("videos");
  std::map<std::string, int> id_count;
  for (const auto& v : j)
    if (v.is_object() && v.contains("video_id") && v["video_id"].is_string()) ++id_count[v["video_id"].get<std::string>()];

  std::vector<Stream> out;
  std::map<std::string, int> seen_ids;
  for (size_t i = 0; i < j.size(); ++i) {
    const auto& v = j[i];
    const std::string at = at_index("", i);
    if (!r.object(v, at)) continue;
    const auto video_id = r.text(v, at, "video_id");
    const auto video_path = r.text(v, at, "video_path");
    const auto* conversations = r.list(v, at, "conversations");
    if (!video_id || !video_path || !conversations) continue;
    Stream s;
    s.id = *video_id;
    if (id_count[*video_id] > 1) {  // MLVU: one video_id in two task folders
      const std::string folder = std::filesystem::path(*video_path).parent_path().filename().string();
      s.id = folder.empty() ? *video_id : folder + "/" + *video_id;
    }
    if (const int n = ++seen_ids[s.id]; n > 1) s.id += "#" + std::to_string(n);
    s.video = resolve_video(rules.video_root, r.file(), *video_path, rules.video_path_keep);
    if (std::filesystem::path(*video_path).extension() == ".npy") s.source_fps = rules.npy_fps;
    const auto clip_start = r.number(v, at, "clip_start_time", false);
    const auto clip_end = r.number(v, at, "clip_end_time", false);
    for (size_t k = 0; k < conversations->size(); ++k) {
      const std::string qat = at_index(at_key(at, "conversations"), k);
      bool ok = true;
      Question q = read_conversation(r, (*conversations)[k], qat, rules, ok);
      if (!ok) continue;
      q.id = s.id + "_" + std::to_string(k);
      if (v.contains("duration_category") && v["duration_category"].is_string())
        q.tags["duration"] = v["duration_category"].get<std::string>();
      if (rules.streaming && clip_start && clip_end && (q.time < *clip_start || q.time > *clip_end))
        r.note(at_key(qat, "end_time"), "outside the clip [clip_start_time, clip_end_time]");
      s.questions.push_back(std::move(q));
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace svqa
