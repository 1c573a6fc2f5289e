#include "benchmarks/datasets/videomme.h"

#include <map>

#include "benchmarks/datasets/rekv_json.h"

namespace svqa {
namespace {

// One question of a Hugging Face row or of the scorer template; false after a fatal problem.
bool read_question(AnnotationReader& r, const nlohmann::json& jq, const std::string& at, Question& q) {
  const size_t fatal_before = r.fatal_count();
  q.id = r.id(jq, at, "question_id").value_or("");
  q.text = r.text(jq, at, "question").value_or("");
  q.category = r.text(jq, at, "task_type").value_or("");
  q.official_options = r.texts(jq, at, "options").value_or(std::vector<std::string>{});
  const auto letter = r.text(jq, at, "answer");
  if (r.fatal_count() != fatal_before) return false;
  for (size_t i = 0; i < q.official_options.size(); ++i) q.options.push_back(strip_option_letter(q.official_options[i], i));
  if (letter->size() != 1 || (*letter)[0] < 'A' || size_t((*letter)[0] - 'A') >= q.options.size()) {
    r.fatal(at_key(at, "answer"), "expected the letter of one of the " + std::to_string(q.options.size()) +
                                      " options, got " + nlohmann::json(*letter).dump());
    return false;
  }
  q.answer_letter = *letter;
  q.answer = q.options[size_t((*letter)[0] - 'A')];
  check_options(r, at, q);
  q.offline = true;
  q.time = kAfterTheVideo;
  return true;
}

}  // namespace

std::vector<Stream> VideoMme::load(std::vector<LoadProblem>& problems) {
  AnnotationReader r(options_.annotations, problems);
  const bool all = options_.duration == "all";
  const std::vector<nlohmann::json> records = r.read_records();
  if (!records.empty() && records[0].is_object() && records[0].contains("conversations")) {
    RekvJsonRules rules;
    rules.video_root = options_.video_root;
    rules.video_path_keep = static_cast<int>(options_.video_path_keep);
    std::vector<Stream> out;
    for (auto& s : read_rekv_json(r, rules)) {
      if (!all && (s.questions.empty() || s.questions[0].tags["duration"] != options_.duration)) continue;
      out.push_back(std::move(s));
    }
    return out;
  }

  std::vector<Stream> out;
  std::map<std::string, size_t> stream_of_video;
  UniqueIds ids;  // Video-MME's question_id ("001-1") names a question in the whole file
  for (size_t i = 0; i < records.size(); ++i) {
    const auto& rec = records[i];
    const std::string at = at_index("", i);
    if (!r.object(rec, at)) continue;
    const auto duration = r.text(rec, at, "duration");
    const auto video_id = r.id(rec, at, "video_id");
    const auto youtube_id = r.text(rec, at, "videoID", false);
    const auto domain = r.text(rec, at, "domain", false);
    const auto sub_category = r.text(rec, at, "sub_category", false);
    if (!duration || !video_id || (!all && *duration != options_.duration)) continue;
    const std::string file = youtube_id.value_or(*video_id);
    auto [it, added] = stream_of_video.emplace(file, out.size());
    if (added)
      out.push_back({file, resolve_video(options_.video_root, r.file(), file + options_.video_extension, 0), {}, 0});
    auto add = [&](const nlohmann::json& jq, const std::string& qat) {
      Question q;
      if (!read_question(r, jq, qat, q)) return;
      ids.add(r, "", q.id, at_key(qat, "question_id"));
      q.tags["duration"] = *duration;
      if (domain) q.tags["domain"] = *domain;
      if (sub_category) q.tags["sub_category"] = *sub_category;
      out[it->second].questions.push_back(std::move(q));
    };
    if (rec.contains("questions")) {  // the scorer template: one entry per video
      if (const auto* questions = r.list(rec, at, "questions"))
        for (size_t k = 0; k < questions->size(); ++k) {
          const std::string qat = at_index(at_key(at, "questions"), k);
          if (r.object((*questions)[k], qat)) add((*questions)[k], qat);
        }
    } else {
      add(rec, at);
    }
  }
  return out;
}

}  // namespace svqa
