#pragma once
// How each benchmark's multiple-choice questions are asked and its answers read, exactly as the
// official scripts do (docs/benchmarks.md quotes each rule). A benchmark names its AnswerRule
// (Benchmark::answer_rule); the run asks and judges through RuleBenchmark (the Benchmark interface)
// and `svqa score` judges with judge().

#include <optional>
#include <string>
#include <vector>

#include "engine/benchmark.h"

namespace svqa {

// The options as "A. …" lines (StreamingBench's prompts): the file's own where it writes them so.
std::vector<std::string> dotted_options(const Question& q);

// "rekv", "streamingbench", …; and back (nullopt for an unknown name).
std::string rule_name(AnswerRule rule);
std::optional<AnswerRule> rule_from_name(const std::string& name);

// The text put where the answer prompt says {question}. Open-ended questions: the question itself.
std::string format_question(AnswerRule rule, const Question& q);
// What the assistant turn is pre-filled with before decoding ("Best option: (" for ReKV); "" none.
std::string answer_prefix(AnswerRule rule, const Question& q);
// The letter the rule compares with: ReKV's is the first option equal to `answer`; the official
// rules use Question::answer_letter (falling back to the first equal option). "" if none.
std::string gold_letter(AnswerRule rule, const Question& q);

// The official verdict on one output. Without a gold letter: wrong unless the rule leaves it unanswered.
Verdict judge(AnswerRule rule, const Question& q, const std::string& output);

// A benchmark asked and judged by its answer_rule(): the Benchmark interface's rule methods
// through the functions above. Every built-in benchmark derives from it.
class RuleBenchmark : public Benchmark {
 public:
  std::string question_text(const Question& q) const override;
  std::string answer_prefix(const Question& q) const override;
  Verdict verdict(const Question& q, const std::string& output) const override;
  bool has_gold(const Question& q) const override;
};

// The parsers, each as its official script (see docs/benchmarks.md):
// ReKV: strip; the character before the first ')' if there is one, else the first character.
std::string rekv_letter(const std::string& output);
// StreamingBench (src/data/count.py): the first character of the response, as is.
std::string streamingbench_letter(const std::string& output);
// LVBench (polish_answer): strip, cut at the first ')', take what follows '(', first ' '-token, first character.
std::string lvbench_letter(const std::string& output);
// Video-MME (extract_characters_regex): strip, delete its answer prefixes, "" if more than ten
// words and no A–D, else the first of A, B, C, D.
std::string videomme_letter(const std::string& output);
// MLVU (check_ans): strip; the character before the first ')' if there is one, else the whole output.
std::string mlvu_reading(const std::string& output);
// CG-Bench (run/utils.py post_process, long_acc): the ```json block's "result" (bare identifiers
// quoted first), else every standalone letter A–H in the response.
struct CgBenchReading {
  bool from_json = false;
  std::string result;                // from_json: the result (a string, or the JSON text of another value)
  std::vector<std::string> letters;  // otherwise: the standalone letters, in order
};
CgBenchReading cgbench_reading(const std::string& output);

}  // namespace svqa
