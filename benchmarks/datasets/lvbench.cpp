#include "benchmarks/datasets/lvbench.h"

#include <sstream>

#include "benchmarks/datasets/clock_time.h"

namespace svqa {
namespace {

// "What year…?\n(A) 1636\n(B) 1366" → the question and {"1636", "1366"}; false if the option
// lines are not (A), (B), … in order.
bool split_options(const std::string& text, std::string& question, std::vector<std::string>& options) {
  std::istringstream lines(text);
  std::string line;
  question.clear();
  options.clear();
  while (std::getline(lines, line)) {
    const std::string label = options.size() < kMaxOptions ? "(" + option_letter(options.size()) + ")" : "";
    if (!label.empty() && line.compare(0, label.size(), label) == 0) {
      const size_t start = line.find_first_not_of(' ', label.size());
      options.push_back(start == std::string::npos ? "" : line.substr(start));
    } else if (!options.empty()) {
      if (line.find_first_not_of(" \t\r") != std::string::npos) return false;  // text after the options
    } else {
      question += (question.empty() ? "" : "\n") + line;
    }
  }
  return !options.empty();
}

}  // namespace

std::vector<Stream> LvBench::load(std::vector<LoadProblem>& problems) {
  AnnotationReader r(options_.annotations, problems);
  const std::vector<nlohmann::json> videos = r.read_records();
  std::vector<Stream> out;
  UniqueIds ids;  // LVBench's uid names a question in the whole file
  for (size_t v = 0; v < videos.size(); ++v) {
    const auto& jv = videos[v];
    const std::string at = at_index("", v);
    if (!r.object(jv, at)) continue;
    const auto key = r.text(jv, at, "key");
    const auto* qa = r.list(jv, at, "qa");
    const auto type = r.text(jv, at, "type", false);
    if (!key || !qa) continue;
    Stream s{*key, resolve_video(options_.video_root, r.file(), *key + options_.video_extension, 0), {}, 0};
    for (size_t k = 0; k < qa->size(); ++k) {
      const auto& jq = (*qa)[k];
      const std::string qat = at_index(at_key(at, "qa"), k);
      if (!r.object(jq, qat)) continue;
      const size_t fatal_before = r.fatal_count();
      Question q;
      q.id = r.id(jq, qat, "uid").value_or("");
      const auto text = r.text(jq, qat, "question");
      const auto letter = r.text(jq, qat, "answer");
      q.categories = r.texts(jq, qat, "question_type").value_or(std::vector<std::string>{});
      const auto reference = r.text(jq, qat, "time_reference", false);
      if (r.fatal_count() != fatal_before) continue;
      ids.add(r, "", q.id, at_key(qat, "uid"));
      if (!split_options(*text, q.text, q.options)) {
        r.fatal(at_key(qat, "question"), "expected the question, then one line per option: \"(A) …\", \"(B) …\", … "
                                             "up to \"(Z) …\"");
        continue;
      }
      if (letter->size() != 1 || (*letter)[0] < 'A' || size_t((*letter)[0] - 'A') >= q.options.size()) {
        r.fatal(at_key(qat, "answer"), "expected the letter of one of the " + std::to_string(q.options.size()) +
                                           " options, got " + nlohmann::json(*letter).dump());
        continue;
      }
      if (q.categories.empty()) r.note(at_key(qat, "question_type"), "no category");
      else q.category = q.categories.front();
      q.answer_letter = *letter;
      q.answer = q.options[size_t((*letter)[0] - 'A')];
      if (reference) {
        if (const auto w = clock_interval(*reference)) q.evidence.push_back(*w);
        else r.note(at_key(qat, "time_reference"), "expected MM:SS-MM:SS, got " + nlohmann::json(*reference).dump());
      }
      if (type) q.tags["video_type"] = *type;
      check_options(r, qat, q);
      q.offline = true;
      q.time = kAfterTheVideo;
      s.questions.push_back(std::move(q));
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace svqa
