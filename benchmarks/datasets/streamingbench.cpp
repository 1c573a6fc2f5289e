#include "benchmarks/datasets/streamingbench.h"

#include <cstdio>
#include <filesystem>
#include <map>

#include "benchmarks/datasets/clock_time.h"

namespace svqa {
namespace {

std::string clock_text(double seconds) {
  const auto s = static_cast<int64_t>(seconds);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  return buf;
}

}  // namespace

StampReading read_streamingbench_stamp(const std::string& stamp, const std::string& malformed_stamps) {
  const auto parts = clock_parts(stamp);
  const auto read = clock_seconds(stamp);
  if (!parts || !read) return {std::nullopt, ""};
  const double official = *read;
  const std::string& last = parts->back();
  if (parts->size() > 1 && last.size() > 2) {  // "00:12450": the seconds run into the minutes
    if (malformed_stamps == "drop") return {std::nullopt, "malformed time_stamp \"" + stamp + "\": question dropped"};
    if (malformed_stamps == "official")
      return {official, "malformed time_stamp \"" + stamp + "\" read by the official rule as " + clock_text(official) +
                            " (" + std::to_string(static_cast<int64_t>(official)) + " s)"};
    double hours = 0;
    for (size_t i = 0; i + 1 < parts->size(); ++i) hours = hours * 60 + std::stod((*parts)[i]);
    const double minutes = std::stod(last.substr(0, 2));
    const double seconds = last.size() >= 4 ? std::stod(last.substr(2, 2)) : 0;
    const double fixed = hours * 3600 + minutes * 60 + seconds;
    return {fixed, "malformed time_stamp \"" + stamp + "\" read as " + clock_text(fixed) + " (the official rule reads " +
                       std::to_string(static_cast<int64_t>(official)) + " s)"};
  }
  if (parts->size() == 2) return {official, "MM:SS time_stamp \"" + stamp + "\" read as " + clock_text(official)};
  if (parts->size() == 3 && last.size() == 1)
    return {official, "one-digit seconds in time_stamp \"" + stamp + "\" read as " + clock_text(official)};
  return {official, ""};
}

bool read_streamingbench_question(AnnotationReader& r, const nlohmann::json& jq, const std::string& qat,
                                  const std::string& malformed_stamps, Question& q) {
  const size_t fatal_before = r.fatal_count();
  q.text = r.text(jq, qat, "question").value_or("");
  q.category = r.text(jq, qat, "task_type").value_or("");
  const auto stamp = r.text(jq, qat, "time_stamp");
  const auto letter = r.text(jq, qat, "answer");
  q.official_options = r.texts(jq, qat, "options").value_or(std::vector<std::string>{});
  if (const auto ability = r.text(jq, qat, "required_ability", false)) q.tags["required_ability"] = *ability;
  if (r.fatal_count() != fatal_before) return false;

  for (size_t i = 0; i < q.official_options.size(); ++i) q.options.push_back(strip_option_letter(q.official_options[i], i));
  if (!q.official_options.empty() && q.official_options[0].compare(0, 2, "A.") != 0)
    r.note(at_key(qat, "options"), "no \"A. \" prefixes: the official prompt adds them");
  if (letter->size() != 1 || (*letter)[0] < 'A' || size_t((*letter)[0] - 'A') >= q.options.size()) {
    r.fatal(at_key(qat, "answer"), "expected the letter of one of the " + std::to_string(q.options.size()) +
                                       " options, got " + nlohmann::json(*letter).dump());
    return false;
  }
  q.answer_letter = *letter;
  q.answer = q.options[size_t((*letter)[0] - 'A')];
  check_options(r, qat, q);

  const StampReading t = read_streamingbench_stamp(*stamp, malformed_stamps);
  if (!t.note.empty()) r.note(at_key(qat, "time_stamp"), t.note);
  if (!t.seconds) {
    if (t.note.empty())
      r.fatal(at_key(qat, "time_stamp"), "expected H:MM:SS or MM:SS (below 10^7 s), got " + nlohmann::json(*stamp).dump());
    return false;
  }
  q.time = *t.seconds;
  q.tags["time_stamp"] = *stamp;  // as the file writes it: SQA's context quotes it
  return true;
}

std::vector<Stream> read_entry_questions(AnnotationReader& r, const StreamingBenchOptions& options,
                                         const std::function<void(EntryQuestion&)>& f) {
  const nlohmann::json j = r.read_json_list("entries");
  std::vector<Stream> out;
  std::map<std::string, size_t> stream_of_video;
  std::map<size_t, size_t> asked;  // questions met so far per stream: ids stay put when one is dropped
  for (size_t e = 0; e < j.size(); ++e) {
    const auto& entry = j[e];
    const std::string at = at_index("", e);
    if (!r.object(entry, at)) continue;
    const auto video_path = r.text(entry, at, "video_path");
    const auto* questions = r.list(entry, at, "questions");
    const auto window = r.text(entry, at, "time", false);  // questions_real_stream.json: none
    const auto video_category = r.text(entry, at, "video_categories", false);
    if (!video_path || !questions) continue;
    const std::string video = resolve_video(options.video_root, r.file(), *video_path,
                                            static_cast<int>(options.video_path_keep));
    auto [it, added] = stream_of_video.emplace(video, out.size());
    if (added) out.push_back({std::filesystem::path(*video_path).stem().string(), video, {}, 0});
    for (size_t k = 0; k < questions->size(); ++k) {
      const std::string qat = at_index(at_key(at, "questions"), k);
      Stream& stream = out[it->second];
      EntryQuestion q{(*questions)[k], qat, at, stream, stream.id + "_" + std::to_string(asked[it->second]++),
                      window, video_category};
      if (r.object(q.question, qat)) f(q);
    }
  }
  return out;
}

std::vector<Stream> StreamingBench::load(std::vector<LoadProblem>& problems) {
  AnnotationReader r(options_.annotations, problems);
  return read_entry_questions(r, options_, [&](EntryQuestion& e) {
    const size_t fatal_before = r.fatal_count();
    Question q;
    q.id = e.id;
    if (e.video_category) q.tags["video_category"] = *e.video_category;
    const auto window = e.window ? e.window : r.text(e.question, e.at, "time", false);
    if (r.fatal_count() != fatal_before) return;
    if (!read_streamingbench_question(r, e.question, e.at, options_.malformed_stamps, q)) return;
    const std::string stamp = q.tags["time_stamp"];
    if (window) {
      const auto w = clock_interval(*window);
      if (!w) r.note(at_key(e.window ? e.entry_at : e.at, "time"), "window " + nlohmann::json(*window).dump() + " not understood");
      else if (q.time < w->first || q.time > w->second)
        r.note(at_key(e.at, "time_stamp"), "\"" + stamp + "\" lies outside its window " + nlohmann::json(*window).dump());
    }
    e.stream.questions.push_back(std::move(q));
  });
}

}  // namespace svqa
