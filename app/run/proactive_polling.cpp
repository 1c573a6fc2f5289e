#include "app/run/proactive_polling.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>

#include "core/io/format.h"

namespace svqa {
namespace {

// The question as put to the model at `time`: the poll's query (no gold: a poll is not judged), or
// the question itself.
Question turn_question(const Question& q, double time, bool poll) {
  Question t = q;
  t.time = time;
  t.poll_times.clear();
  if (poll) {
    t.text = q.poll_text;
    t.answer.clear(), t.answer_letter.clear(), t.evidence.clear();
  }
  return t;
}

// Appends the official user and assistant turns of one answer (and svqa's own fields) to `dialog`.
void add_turns(nlohmann::json& dialog, const QuestionStep& step, const Question& asked, const PredictionRecord& r) {
  const double ttft = r.timing ? r.timing->ttft_s : 0;
  const double cost = r.timing ? r.timing->ttft_s + r.timing->decode_s : 0;  // as the official wall time of a reply
  nlohmann::json spans = nlohmann::json::array();
  for (const auto& [id, span] : r.block_spans) spans.push_back({span.first, span.second});
  dialog.push_back({{"role", "user"}, {"content", asked.text}, {"time", asked.time}, {"cost", cost},
                    {"prompt", step.benchmark.question_text(asked)}});
  dialog.push_back({{"role", "assistant"}, {"content", r.output}, {"time", asked.time}, {"cost", cost},
                    {"ttft_s", ttft}, {"block_spans", spans}});
}

// One proactive question while its polls run.
struct Polling {
  const Question* q = nullptr;
  nlohmann::json dialog = nlohmann::json::array();
  double encode_s = 0;
  int64_t encode_frames = 0;
  bool finished = false;
};

// The question's record from its last answer `last` (at `time`): the dialog, the polls' encoding.
PredictionRecord finished_record(const QuestionStep& step, Polling& p, PredictionRecord last, double time, bool yes) {
  last.question = p.q->text;  // the question, though its last turn may be a poll
  last.extra["dialog_history"] = p.dialog;
  last.extra["answered"] = yes ? nlohmann::json(time) : nlohmann::json(false);
  p.finished = true;
  if (!last.answered()) return last;
  last.time = time;
  last.reference = p.q->answer;
  if (last.timing) last.timing->encode_s = p.encode_s, last.timing->encode_frames = p.encode_frames;
  if (!yes && step.benchmark.has_gold(*p.q)) {  // the last poll's answer is the last turn: count.py judges it
    const Verdict v = step.benchmark.verdict(turn_question(*p.q, time, false), last.output);
    last.letter = v.parsed;
    if (v.outcome != Verdict::Outcome::unanswered) last.correct = v.outcome == Verdict::Outcome::correct;
  }
  return last;
}

// The times a finished question of an earlier run was polled at (its record's user turns).
std::vector<double> recorded_polls(const PredictionLog& log, const std::string& stream_id, const Question& q) {
  std::vector<double> out;
  for (const auto& r : log.records()) {
    if (r.stream != stream_id || r.question_id != q.id || !r.extra.contains("dialog_history")) continue;
    for (const auto& turn : r.extra["dialog_history"])
      if (turn.value("role", "") == "user" && turn.contains("time") && (out.empty() || out.back() != turn["time"].get<double>()))
        out.push_back(turn["time"].get<double>());
  }
  return out;
}

}  // namespace

void check_poll_counts(const std::vector<Stream>& streams, std::ostream& log) {
  for (const auto& s : streams)
    for (const auto& q : s.questions) {
      const auto polls = static_cast<int64_t>(q.poll_times.size());
      if (polls <= kManyPolls) continue;
      const std::string what = fmt::format("proactive question {}/{} asks for {} polls ({:.0f} s to {:.0f} s), each a model call",
                                           s.id, q.id, polls, q.poll_times.front(), q.poll_times.back());
      if (polls > kMostPolls)
        throw std::invalid_argument(fmt::format("{}: more than {} (a day of once-a-second polls); check its annotation",
                                                what, kMostPolls));
      log << "warning: " << what << "\n";
    }
}

void run_polled_stream(const QuestionStep& step, StreamEncoding& stream, const std::string& stream_id,
                       const std::vector<Question>& questions, const PredictionLog& log, const PolledStream& io) {
  std::vector<Polling> state(questions.size());
  std::vector<std::pair<double, size_t>> polls;  // (time, question): every poll, stably in time order
  for (size_t i = 0; i < questions.size(); ++i) {
    state[i].q = &questions[i];
    const bool done = log.done(stream_id, questions[i].id);
    for (const double t : done ? recorded_polls(log, stream_id, questions[i]) : questions[i].poll_times)
      polls.emplace_back(t, i);
  }
  std::stable_sort(polls.begin(), polls.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [time, i] : polls) {
    Polling& p = state[i];
    const Question& q = *p.q;
    if (log.done(stream_id, q.id)) {
      io.encode_until(time);
      replay_answered(step, stream, turn_question(q, time, true));
      continue;
    }
    if (p.finished) continue;
    const StreamEncoding::Step encoded = io.encode_until(time);
    p.encode_s += encoded.seconds, p.encode_frames += encoded.frames;
    const Question poll = turn_question(q, time, true);
    PredictionRecord r = answer_one(step, stream, stream_id, poll, encoded);
    if (!r.answered()) {
      io.record(finished_record(step, p, std::move(r), time, false));
      continue;
    }
    add_turns(p.dialog, step, poll, r);
    if (step.benchmark.poll_says_yes(r.output)) {
      const Question asked = turn_question(q, time, false);
      PredictionRecord a = answer_one(step, stream, stream_id, asked, {});
      if (a.answered()) add_turns(p.dialog, step, asked, a);
      io.record(finished_record(step, p, std::move(a), time, true));
    } else if (time == q.poll_times.back()) {
      io.record(finished_record(step, p, std::move(r), time, false));
    }
  }
}

}  // namespace svqa
