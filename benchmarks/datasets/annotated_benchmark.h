#pragma once
// What every official-format loader shares: streams() from load() (every fatal problem at once),
// video paths under video_root, and the checks on a multiple-choice question's options.

#include <limits>
#include <string>
#include <vector>

#include "benchmarks/datasets/annotation_reader.h"
#include "benchmarks/datasets/answer_parsing.h"

namespace svqa {

// Question::time of an offline question: after the whole video.
inline constexpr double kAfterTheVideo = std::numeric_limits<double>::infinity();

class AnnotatedBenchmark : public RuleBenchmark {
 public:
  // load(); throws one std::runtime_error listing every fatal problem ("FILE: [i].field: what").
  std::vector<Stream> streams() final;
};

// The video file of a record: `path` under `video_root` (default: the annotation file's directory).
// keep = 0: the whole path (used as is when absolute); keep = n: only its last n components, as
// the directory prefixes in the official files are installation-specific ("/data/rvs/ego/videos/x.mp4").
std::string resolve_video(const std::string& video_root, const std::string& annotations, const std::string& path,
                          int keep);

// Options a question may have: one per letter A to Z, the only labels every prompt and parser knows.
inline constexpr size_t kMaxOptions = 26;
// "A", "B", … "Z" for option i < kMaxOptions; std::out_of_range beyond (loaders refuse such questions).
std::string option_letter(size_t i);
// "A. text" → "text" (also "A.text") for option i; an option without its letter is kept whole.
std::string strip_option_letter(const std::string& option, size_t i);
// Index of the first (or last) option equal to `answer`; -1 if none.
int find_option(const std::vector<std::string>& options, const std::string& answer, bool last = false);

// A fatal problem for more than kMaxOptions options; notes (not fatal) for duplicate option texts (saying when the gold one is duplicated), empty
// options, and an answer that is not among the options (the question cannot be scored).
// `options_key` / `answer_key` name the fields in the file ("choices", "right_answer", ...).
void check_options(AnnotationReader& r, const std::string& at, const Question& q, const char* options_key = "options",
                   const char* answer_key = "answer");

}  // namespace svqa
