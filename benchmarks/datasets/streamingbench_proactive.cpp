#include "benchmarks/datasets/streamingbench_proactive.h"

namespace svqa {

std::string proactive_prompt(const std::string& query) {
  return "You are an advanced image question-answering AI assistant. You have been provided with images and a "
         "question related to the images. Your task is to carefully analyze the images and provide the answer to "
         "the question. You need to carefully confirm whether the images content meet the conditions of the "
         "question, and then output the correct content.\n\nQuestion: " +
         query + "\n\nThe answer is:\n";
}

std::string proactive_poll_query(const std::string& question, const std::string& ground_truth_output) {
  return question + " Is it the right time to output \"" + ground_truth_output + "\"? You can only answer yes or no.";
}

std::vector<double> proactive_poll_times(double time_stamp, double ground_truth_time) {
  std::vector<double> out;
  for (double t = time_stamp + 1; t <= ground_truth_time + 4; t += 1) out.push_back(t);
  return out;
}

bool is_proactive(const Question& q) { return q.tags.count("ground_truth_time") > 0; }

double proactive_ground_truth_time(const Question& q) { return std::stod(q.tags.at("ground_truth_time")); }

Verdict proactive_verdict(const Question& q, std::optional<double> last_time, const std::string& last_answer) {
  if (!last_time || !is_proactive(q)) return {Verdict::Outcome::unanswered, ""};
  const double d = *last_time - proactive_ground_truth_time(q);
  const bool on_time = -2 <= d && d <= 2;
  const bool said = last_answer.find(q.answer_letter) != std::string::npos;
  return {on_time && said ? Verdict::Outcome::correct : Verdict::Outcome::wrong, on_time ? "on time" : "off time"};
}

std::vector<Stream> StreamingBenchProactive::load(std::vector<LoadProblem>& problems) {
  AnnotationReader r(options_.annotations, problems);
  return read_entry_questions(r, options_, [&](EntryQuestion& e) {
    const size_t fatal_before = r.fatal_count();
    Question q;
    q.id = e.id;
    q.text = r.text(e.question, e.at, "question").value_or("");
    q.category = r.text(e.question, e.at, "task_type").value_or("");
    const auto stamp = r.text(e.question, e.at, "time_stamp");
    const auto gt_stamp = r.text(e.question, e.at, "ground_truth_time_stamp");
    const auto gt_output = r.text(e.question, e.at, "ground_truth_output");
    if (const auto ability = r.text(e.question, e.at, "required_ability", false)) q.tags["required_ability"] = *ability;
    if (r.fatal_count() != fatal_before) return;
    std::optional<double> times[2];
    const std::pair<const char*, const std::string*> stamps[2] = {{"time_stamp", &*stamp},
                                                                  {"ground_truth_time_stamp", &*gt_stamp}};
    for (int i = 0; i < 2; ++i) {
      const StampReading t = read_streamingbench_stamp(*stamps[i].second, options_.malformed_stamps);
      if (!t.note.empty()) r.note(at_key(e.at, stamps[i].first), t.note);
      if (!t.seconds && t.note.empty())
        r.fatal(at_key(e.at, stamps[i].first), "expected H:MM:SS or MM:SS, got " + nlohmann::json(*stamps[i].second).dump());
      times[i] = t.seconds;
    }
    if (!times[0] || !times[1]) return;
    if (gt_output->empty()) {  // it would occur in every answer
      r.fatal(at_key(e.at, "ground_truth_output"), "expected a non-empty text");
      return;
    }
    q.poll_times = proactive_poll_times(*times[0], *times[1]);
    if (q.poll_times.empty()) {  // the official code records no turn, and count.py fails on it
      r.fatal(at_key(e.at, "ground_truth_time_stamp"), "expected at most 3 s before time_stamp (no poll otherwise), got \"" +
                                                           *gt_stamp + "\" for \"" + *stamp + "\"");
      return;
    }
    q.time = q.poll_times.front();
    q.poll_text = proactive_poll_query(q.text, *gt_output);
    q.answer = q.answer_letter = *gt_output;  // a closed question: its gold is the text to output
    q.evidence = {{*times[1] - 2, *times[1] + 2}};  // the answer counts inside this window
    q.tags["time_stamp"] = *stamp;
    q.tags["ground_truth_time_stamp"] = *gt_stamp;
    q.tags["ground_truth_time"] = std::to_string(*times[1]);
    if (e.video_category) q.tags["video_category"] = *e.video_category;
    e.stream.questions.push_back(std::move(q));
  });
}

}  // namespace svqa
