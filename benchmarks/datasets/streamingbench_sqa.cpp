#include "benchmarks/datasets/streamingbench_sqa.h"

#include <filesystem>

namespace svqa {

std::string sqa_context_after(const std::string& context, const Question& previous) {
  const std::vector<std::string> o = dotted_options(previous);
  std::string c = context.empty() ? "Here are the contextual information related to the video. Please answer the "
                                    "questions based on the contextual information: "
                                  : context;
  c += "At timestamp " + previous.tags.at("time_stamp") + ", the following question and answer occurred: Question: " +
       previous.text + "; Options: ";
  for (size_t i = 0; i < o.size(); ++i) c += (i ? ", " : "") + o[i];
  return c + "; Answer: " + previous.answer_letter + "; ";
}

std::vector<Stream> StreamingBenchSqa::load(std::vector<LoadProblem>& problems) {
  AnnotationReader r(options_.annotations, problems);
  const nlohmann::json j = r.read_json_list("videos");
  std::vector<Stream> out;
  for (size_t v = 0; v < j.size(); ++v) {
    const std::string vat = at_index("", v);
    if (!j[v].is_array() || j[v].empty()) {
      r.fatal(vat, "expected a video: a non-empty list of windows, got " + describe_json(j[v]));
      continue;
    }
    Stream stream;
    std::string context;
    size_t k = 0;  // the video's questions met so far: ids stay put when one is dropped
    for (size_t w = 0; w < j[v].size(); ++w) {
      const auto& window = j[v][w];
      const std::string at = at_index(vat, w);
      if (!r.object(window, at)) continue;
      const auto video_path = r.text(window, at, "video_path");
      const auto* questions = r.list(window, at, "questions");
      const auto category = r.text(window, at, "video_categories", false);
      if (!video_path || !questions) continue;
      const std::string video = resolve_video(options_.video_root, r.file(), *video_path,
                                              static_cast<int>(options_.video_path_keep));
      if (stream.video.empty()) stream = {std::filesystem::path(*video_path).stem().string(), video, {}, 0};
      else if (video != stream.video) {
        r.fatal(at_key(at, "video_path"), "expected this video's \"" + stream.video + "\", got \"" + video + "\"");
        continue;
      }
      for (size_t i = 0; i < questions->size(); ++i) {
        const std::string qat = at_index(at_key(at, "questions"), i);
        Question q;
        q.id = stream.id + "_" + std::to_string(k++);
        if (!r.object((*questions)[i], qat)) continue;
        if (!read_streamingbench_question(r, (*questions)[i], qat, options_.malformed_stamps, q)) continue;
        if (q.options.size() != 4) {
          r.fatal(at_key(qat, "options"), "expected 4 options (the official prompt shows four), got " +
                                              std::to_string(q.options.size()));
          continue;
        }
        if (category) q.tags["video_category"] = *category;
        q.tags["sqa_context"] = context;
        context = sqa_context_after(context, q);
        stream.questions.push_back(std::move(q));
      }
    }
    if (!stream.questions.empty()) out.push_back(std::move(stream));
  }
  return out;
}

}  // namespace svqa
