#pragma once
// A benchmark: streams of questions asked at times, loaded from an annotation file.
// The official formats and their rules: docs/benchmarks.md.

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace svqa {

struct Question {
  std::string id;
  double time = 0;                   // seconds into the video when it is asked; +infinity when offline
  std::string text;
  std::vector<std::string> options;  // empty: open-ended
  std::string answer;                // option text (multiple choice) or reference answer; may be empty
  std::string category;              // the row of the benchmark's per-category table

  // Asked after the whole video (CG-Bench, LVBench, Video-MME, MLVU, EgoSchema): the runner
  // encodes every frame first and records the stream's end as the question's time.
  bool offline = false;
  // The gold letter as the official scorer defines it (a letter field, or MLVU's last matching
  // option); empty: the letter of `answer`'s first occurrence in `options` (ReKV). A question
  // without options that its rule judges all the same (OVO-Bench's forward probes: a count, or
  // Yes/No) holds its gold here too: see judged_by_rule.
  std::string answer_letter;
  std::vector<std::string> categories;  // every label of a multi-label question (LVBench); empty: {category}
  std::vector<std::pair<double, double>> evidence;  // [start, end] seconds that show the answer (clues, RVS windows)
  // The options as the file writes them ("A. …"), where an official prompt shows them so; empty: `options`.
  std::vector<std::string> official_options;
  std::map<std::string, std::string> tags;  // other labels (domain, video category, duration group)
  // A proactive question (StreamingBench's Proactive Output): before the question itself the model is
  // asked `poll_text` at each of `poll_times` (ascending seconds; `time` is the first) until the
  // benchmark's poll_says_yes accepts an answer; the question is then asked at that poll's time.
  // Empty: asked once, at `time`. The run's app/run/proactive_polling.h drives it.
  std::vector<double> poll_times;
  std::string poll_text;
};

// Multiple choice, or a closed question with a gold the rule compares with: judged by the
// benchmark's rule, not open-ended.
inline bool judged_by_rule(const Question& q) { return !q.options.empty() || !q.answer_letter.empty(); }

struct Stream {
  std::string id;
  std::string video;  // a video file, .npy frames or an image directory
  std::vector<Question> questions;
  // .npy / image-directory sources: the rate the frames were taken at (RVS-Movie: 1); 0: not given.
  double source_fps = 0;
};

// How a benchmark's multiple-choice questions are put to the model and its answers read
// (benchmarks/datasets/answer_parsing.h). `rekv` is ReKV's prompt and letter rule, which the compared
// papers used; the others are each benchmark's official scorer.
enum class AnswerRule { rekv, streamingbench, cgbench, lvbench, videomme, mlvu, ovobench };

// What a benchmark's rule made of one multiple-choice output.
struct Verdict {
  enum class Outcome { correct, wrong, unanswered };  // unanswered: left out of the accuracy by the rule
  Outcome outcome = Outcome::unanswered;
  std::string parsed;  // what the rule read from the output: a letter, CG-Bench's result or letters
};

// Something wrong or unusual in an annotation file: `where` is "FILE: [record].field".
// Fatal: the record cannot be used (skipped); otherwise it is used as docs/benchmarks.md says.
struct LoadProblem {
  std::string where;
  std::string what;
  bool fatal = false;
};

class Benchmark {
 public:
  virtual ~Benchmark() = default;
  // Every stream with its questions. Throws std::runtime_error naming the file, record and field.
  virtual std::vector<Stream> streams() = 0;
  // Every stream, recording every problem found instead of stopping at the first (fatal records
  // are skipped), for `svqa benchmark inspect`. Default: streams(), no problems.
  virtual std::vector<Stream> load(std::vector<LoadProblem>& problems) {
    (void)problems;
    return streams();
  }
  virtual AnswerRule answer_rule() const { return AnswerRule::rekv; }

  // How the run puts a question to the model and reads its answer: the benchmark's rule
  // (benchmarks/datasets/answer_parsing.h's RuleBenchmark implements these for every AnswerRule).
  // The text that replaces {question} in the answer prompt (open-ended: the question itself).
  virtual std::string question_text(const Question& q) const = 0;
  // What the assistant turn is pre-filled with before decoding ("Best option: (" for ReKV); "" none.
  virtual std::string answer_prefix(const Question& q) const = 0;
  // The official verdict on one multiple-choice output, and whether it counts: a question without
  // a gold letter, or an output the rule leaves unanswered, has no correct/wrong.
  virtual Verdict verdict(const Question& q, const std::string& output) const = 0;
  virtual bool has_gold(const Question& q) const = 0;
  // Whether an answer to a proactive question's poll (Question::poll_text) says it is time to answer.
  // Default: StreamingBench's rule (src/benchmark/StreamingBenchProactive.py): "yes" anywhere in the
  // lowercased answer, so "Yes.", "eyes" and "yes, no" all say yes.
  virtual bool poll_says_yes(const std::string& output) const {
    std::string lower = output;  // Python's str.lower() on ASCII; other bytes cannot spell "yes"
    for (char& c : lower)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return lower.find("yes") != std::string::npos;  // strip() cannot change whether it occurs
  }
};

}  // namespace svqa
