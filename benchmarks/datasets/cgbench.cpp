#include "benchmarks/datasets/cgbench.h"

#include <map>

namespace svqa {

std::vector<Stream> CgBench::load(std::vector<LoadProblem>& problems) {
  AnnotationReader r(options_.annotations, problems);
  const nlohmann::json j = r.read_json_list("questions");
  std::vector<Stream> out;
  std::map<std::string, size_t> stream_of_video;
  UniqueIds ids;  // CG-Bench's qid names a question in the whole file
  for (size_t i = 0; i < j.size(); ++i) {
    const auto& jq = j[i];
    const std::string at = at_index("", i);
    if (!r.object(jq, at)) continue;
    const size_t fatal_before = r.fatal_count();
    Question q;
    q.id = r.id(jq, at, "qid").value_or("");
    const auto video_uid = r.text(jq, at, "video_uid");
    q.text = r.text(jq, at, "question").value_or("");
    q.answer = r.text(jq, at, "answer").value_or("");
    q.options = r.texts(jq, at, "choices").value_or(std::vector<std::string>{});
    const auto right = r.text(jq, at, "right_answer");
    q.evidence = r.intervals(jq, at, "clue_intervals").value_or(std::vector<std::pair<double, double>>{});
    q.category = r.text(jq, at, "sub_category").value_or("");
    if (const auto domain = r.text(jq, at, "domain", false)) q.tags["domain"] = *domain;
    if (r.fatal_count() != fatal_before) continue;
    ids.add(r, "", q.id, at_key(at, "qid"));
    if (q.options.size() < 2 || q.options.size() > 8)
      r.note(at_key(at, "choices"), std::to_string(q.options.size()) + " options (CG-Bench has 5 to 8)");
    if (right->size() != 1 || (*right)[0] < 'A' || size_t((*right)[0] - 'A') >= q.options.size()) {
      r.fatal(at_key(at, "right_answer"), "expected the letter of one of the " + std::to_string(q.options.size()) +
                                              " choices, got " + nlohmann::json(*right).dump());
      continue;
    }
    q.answer_letter = *right;
    if (q.options[size_t((*right)[0] - 'A')] != q.answer)
      r.note(at_key(at, "right_answer"), *right + " is not the choice equal to the answer " + nlohmann::json(q.answer).dump());
    check_options(r, at, q, "choices");
    q.offline = true;
    q.time = kAfterTheVideo;
    auto [it, added] = stream_of_video.emplace(*video_uid, out.size());
    if (added)
      out.push_back({*video_uid, resolve_video(options_.video_root, r.file(), *video_uid + options_.video_extension, 0),
                     {}, 0});
    out[it->second].questions.push_back(std::move(q));
  }
  return out;
}

}  // namespace svqa
