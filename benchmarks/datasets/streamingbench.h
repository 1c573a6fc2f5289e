#pragma once
// StreamingBench, Real-Time Visual Understanding (THUNLP-MT/StreamingBench `src/data/`):
// `questions_real.json` (one entry per time window: {time, questions, video_categories, video_path})
// or `questions_real_stream.json` (one entry per video: {questions (each with its own `time`), video_path}).
// Each question is asked at its `time_stamp`; options keep their "A. " prefixes in the file (the
// official prompt shows them so) and lose them in Question::options; `answer` is a letter.
// Streams are the videos (stream id = the file name without extension), question id = "<stream>_<k>",
// k the question's index in the file among that video's.

#include <functional>
#include <optional>
#include <string>

#include "benchmarks/datasets/annotated_benchmark.h"
#include "core/config/schema.h"

namespace svqa {

struct StreamingBenchOptions {
  std::string annotations;
  std::string video_root;
  int64_t video_path_keep = 1;
  std::string malformed_stamps = "fix";
  std::string rule = "official";
  static void declare(Schema<StreamingBenchOptions>& s) {
    s.field("annotations", &StreamingBenchOptions::annotations,
            "questions_real.json or questions_real_stream.json; streamingbench_sqa: questions_sqa.json; "
            "streamingbench_proactive: questions_proactive.json")
        .required().must_exist("file");
    s.field("video_root", &StreamingBenchOptions::video_root, "directory videos are under; empty: the file's own")
        .must_exist("directory");
    s.field("video_path_keep", &StreamingBenchOptions::video_path_keep,
            "trailing components of video_path kept under video_root (0: the whole path)")
        .min(0)
        .max(255);
    s.field("malformed_stamps", &StreamingBenchOptions::malformed_stamps,
            "a time_stamp like \"00:12450\": fix (read as 0:12:45), drop the question, or official (12450 s)")
        .one_of({"fix", "drop", "official"});
    s.field("rule", &StreamingBenchOptions::rule,
            "official: StreamingBench's prompt and first-letter rule; rekv: ReKV's prompt and parser")
        .one_of({"official", "rekv"});
  }
};

// A time_stamp in seconds under a `malformed_stamps` mode, with a note when it is not plain
// H:MM:SS (MM:SS, one-digit seconds, "00:12450"); nullopt seconds: unreadable, or dropped.
struct StampReading {
  std::optional<double> seconds;
  std::string note;
};
StampReading read_streamingbench_stamp(const std::string& stamp, const std::string& malformed_stamps);

// One question of a StreamingBench file (real-time, SQA): its text, task_type, letter answer, options
// (prefixes stripped, the file's kept in official_options), required_ability and time_stamp. False
// when it cannot be asked (the problem recorded, or the question dropped by `malformed_stamps`).
bool read_streamingbench_question(AnnotationReader& r, const nlohmann::json& jq, const std::string& at,
                                  const std::string& malformed_stamps, Question& q);

// One question object of a file of entries ({time, questions, video_categories, video_path}:
// questions_real.json, questions_proactive.json), with the stream of its video (made on first sight,
// id = the file name without extension) and its id "<stream>_<k>", k its index among the video's
// questions in the file (ids stay put when one is dropped).
struct EntryQuestion {
  const nlohmann::json& question;
  const std::string& at;  // "[e].questions[k]"
  const std::string& entry_at;  // "[e]"
  Stream& stream;
  std::string id;
  std::optional<std::string> window, video_category;  // the entry's `time` and `video_categories`
};
// Calls `f` on every question object of the file's entries; entries that are not objects or lack
// video_path / questions are recorded problems. Returns the streams, with what `f` added to them.
std::vector<Stream> read_entry_questions(AnnotationReader& r, const StreamingBenchOptions& options,
                                         const std::function<void(EntryQuestion&)>& f);

class StreamingBench final : public AnnotatedBenchmark {
 public:
  explicit StreamingBench(StreamingBenchOptions options) : options_(std::move(options)) {}
  std::vector<Stream> load(std::vector<LoadProblem>& problems) override;
  AnswerRule answer_rule() const override {
    return options_.rule == "rekv" ? AnswerRule::rekv : AnswerRule::streamingbench;
  }

 private:
  StreamingBenchOptions options_;
};

}  // namespace svqa
