#include "benchmarks/datasets/ovobench.h"

#include <cmath>
#include <filesystem>
#include <map>

namespace svqa {
namespace {

// A time the official clip ends at: ceil(realtime) (utils/chunk_videos.py); nullopt after a problem.
std::optional<double> ask_time(AnnotationReader& r, const nlohmann::json& o, const std::string& at) {
  const auto t = r.number(o, at, "realtime");
  if (!t) return std::nullopt;
  if (*t < 0 || !std::isfinite(*t)) {
    r.fatal(at_key(at, "realtime"), "expected seconds >= 0, got " + nlohmann::json(*t).dump());
    return std::nullopt;
  }
  return std::ceil(*t);
}

// An integer field in [lo, hi]; nullopt (and a fatal problem) otherwise.
std::optional<int64_t> integer(AnnotationReader& r, const nlohmann::json& o, const std::string& at, const char* key,
                               int64_t lo, int64_t hi) {
  const auto v = r.number(o, at, key);
  if (!v) return std::nullopt;
  if (*v != std::floor(*v) || *v < double(lo) || *v > double(hi)) {
    r.fatal(at_key(at, key), "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi) +
                                 ", got " + nlohmann::json(*v).dump());
    return std::nullopt;
  }
  return static_cast<int64_t>(*v);
}

// A backward or real-time record: one multiple-choice question at ceil(realtime).
bool multiple_choice(AnnotationReader& r, const nlohmann::json& o, const std::string& at, Question& q,
                     int64_t& answer_not_an_option) {
  const size_t fatal_before = r.fatal_count();
  q.text = r.text(o, at, "question").value_or("");
  q.options = r.texts(o, at, "options").value_or(std::vector<std::string>{});
  const auto answer = r.text(o, at, "answer", false);
  const auto time = ask_time(r, o, at);
  if (r.fatal_count() != fatal_before) return false;
  if (q.options.empty()) {
    r.fatal(at_key(at, "options"), "expected at least one option");
    return false;
  }
  const auto gt = integer(r, o, at, "gt", 0, static_cast<int64_t>(q.options.size()) - 1);
  if (!gt) return false;
  q.answer_letter = option_letter(size_t(*gt));
  q.answer = q.options[size_t(*gt)];
  q.time = *time;
  if (answer && *answer != q.answer) {
    const int other = find_option(q.options, *answer);
    if (other >= 0)
      r.note(at_key(at, "gt"), "gt is " + q.answer_letter + " but `answer` is option " + option_letter(size_t(other)) +
                                   ": the official scorer uses gt");
    else
      ++answer_not_an_option;
  }
  check_options(r, at, q);
  return true;
}

// The probes of a forward record, each a question at its own ceil(realtime); `prompt_text` is what
// the task's prompt carries (REC: the count question; SSR: the probe's step; CRR: the question).
std::vector<Question> probes(AnnotationReader& r, const nlohmann::json& o, const std::string& at, const Question& item) {
  std::vector<Question> out;
  std::optional<std::string> shared;  // REC's question and CRR's are the record's, SSR's step the probe's
  if (item.category == "REC") {
    if (const auto activity = r.text(o, at, "activity")) shared = "How many times did they " + *activity + "?";
  } else if (item.category == "CRR") {
    shared = r.text(o, at, "question");
  }
  const auto* info = r.list(o, at, "test_info");
  if (!info || (item.category != "SSR" && !shared)) return out;
  if (info->empty()) r.note(at_key(at, "test_info"), "no probes: the record is never asked");
  for (size_t k = 0; k < info->size(); ++k) {
    const auto& p = (*info)[k];
    const std::string pat = at_index(at_key(at, "test_info"), k);
    if (!r.object(p, pat)) continue;
    const size_t fatal_before = r.fatal_count();
    Question q = item;
    q.id = item.id + "_" + std::to_string(k);
    q.tags["probe"] = std::to_string(k);
    const auto time = ask_time(r, p, pat);
    if (item.category == "REC") {
      const auto count = integer(r, p, pat, "count", 0, 1000000);
      if (count) q.answer = std::to_string(*count);
      q.text = *shared;
    } else {
      if (item.category == "SSR") q.text = r.text(p, pat, "step").value_or("");
      else q.text = *shared;
      const auto type = integer(r, p, pat, "type", 0, 1);
      if (type) q.answer = *type ? "Yes" : "No";
    }
    if (r.fatal_count() != fatal_before) continue;
    q.answer_letter = q.answer;
    q.time = *time;
    out.push_back(std::move(q));
  }
  return out;
}

}  // namespace

std::string ovobench_group(const std::string& task) {
  for (const char* t : {"EPM", "ASI", "HLD"})
    if (task == t) return "backward";
  for (const char* t : {"OCR", "ACR", "ATR", "STU", "FPD", "OJR"})
    if (task == t) return "realtime";
  for (const char* t : {"REC", "SSR", "CRR"})
    if (task == t) return "forward";
  return "";
}

bool ovobench_forward(const std::string& task) { return ovobench_group(task) == "forward"; }

std::vector<Stream> OvoBench::load(std::vector<LoadProblem>& problems) {
  AnnotationReader r(options_.annotations, problems);
  const nlohmann::json j = r.read_json_list("records");
  std::vector<Stream> out;
  std::map<std::string, size_t> stream_of_video;
  std::map<std::string, std::string> video_of_stream;  // two videos with one file name would share a stream id
  UniqueIds ids;
  int64_t answer_not_an_option = 0;
  for (size_t i = 0; i < j.size(); ++i) {
    const auto& o = j[i];
    const std::string at = at_index("", i);
    if (!r.object(o, at)) continue;
    const size_t fatal_before = r.fatal_count();
    Question item;
    item.id = r.id(o, at, "id").value_or("");
    item.category = r.text(o, at, "task").value_or("");
    const auto video = r.text(o, at, "video");
    if (r.fatal_count() != fatal_before) continue;
    const std::string group = ovobench_group(item.category);
    if (group.empty()) {
      r.fatal(at_key(at, "task"), "expected one of EPM, ASI, HLD, OCR, ACR, ATR, STU, FPD, OJR, REC, SSR, CRR, got " +
                                      nlohmann::json(item.category).dump());
      continue;
    }
    ids.add(r, "", item.id, at_key(at, "id"));
    item.tags["group"] = group;
    item.tags["item"] = item.id;
    std::vector<Question> questions;
    if (group == "forward") {
      questions = probes(r, o, at, item);
    } else if (multiple_choice(r, o, at, item, answer_not_an_option)) {
      questions.push_back(std::move(item));
    }
    if (questions.empty()) continue;

    const std::string stream_id = std::filesystem::path(*video).stem().string();
    if (const auto seen = video_of_stream.emplace(stream_id, *video); !seen.second && seen.first->second != *video) {
      r.fatal(at_key(at, "video"), "\"" + *video + "\" has the file name of \"" + seen.first->second +
                                       "\": stream ids would repeat");
      continue;
    }
    auto [it, added] = stream_of_video.emplace(*video, out.size());
    if (added)
      out.push_back({stream_id,
                     resolve_video(options_.video_root, r.file(), *video, static_cast<int>(options_.video_path_keep)),
                     {},
                     0});
    for (auto& q : questions) out[it->second].questions.push_back(std::move(q));
  }
  if (answer_not_an_option)
    r.note("answer", std::to_string(answer_not_an_option) +
                         " records' `answer` text is none of their options (wording differs): the official scorer "
                         "uses gt");
  return out;
}

}  // namespace svqa
