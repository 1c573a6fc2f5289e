#pragma once
// The LLM judge of open-ended answers (RVS-Ego, RVS-Movie): the Video-ChatGPT protocol that ReKV's
// eval_open_ended.py runs (../shared/reference/benchmarks.md §1). One chat-completions call per
// question to any OpenAI-compatible endpoint, temperature 0, max_tokens 300; the reply is a Python
// dict string {'pred': 'yes'|'no', 'score': 0-5}. Unlike the reference script, which re-submits
// unparseable replies until every item has one (and can loop forever), a question gets at most
// max_attempts tries and is then reported as failed. Successful judgments are cached in a JSON
// Lines file, so a rerun asks only for what is new or failed.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>

namespace svqa {

struct JudgeOptions;  // core/experiment.h

enum class JudgeVerdict { yes, no, neither };
const char* verdict_name(JudgeVerdict v);  // "yes", "no", "neither"

// What the reference script reads from a reply: the value of 'pred' (fallback key 'prev') is yes
// if it contains "yes" (lowercased), else no if it contains "no", else neither; 'score' is
// int(score), truncating 4.8 to 4. A reply without a pred value is not parsed (parsed = false).
struct JudgeReply {
  bool parsed = false;
  JudgeVerdict verdict = JudgeVerdict::neither;
  std::optional<int64_t> score;  // absent when the reply has no (numeric) score
};

// Tolerant: single or double quotes, prose around the dict, a quoted number as the score.
JudgeReply parse_judge_reply(const std::string& text);

// The two messages, byte for byte as the reference script builds them (missing separators and
// the double space included); `prediction` has every '\n' removed first, as the script does.
const std::string& judge_system_message();
std::string judge_user_message(const std::string& question, const std::string& answer, const std::string& prediction);
std::string without_newlines(std::string text);

struct Judgment {
  bool ok = false;  // a reply was read (then verdict and score); else `error` says why
  JudgeVerdict verdict = JudgeVerdict::neither;
  std::optional<int64_t> score;
  std::string reply;      // the raw content of the last reply (empty if none came)
  int64_t attempts = 0;   // requests made for this question (0: from the cache)
  std::string error;      // the last try's failure, e.g. "HTTP 500", "timeout after 0.5 s"
  bool cached = false;
};

class LlmJudge {
 public:
  // Resolves the environment fallbacks (base_url ← $OPENAI_BASE_URL, model ← $SVQA_JUDGE_MODEL,
  // the key from $<api_key_env> if set) and loads the cache (`cache` empty: no cache). Throws
  // std::invalid_argument naming judge.base_url / judge.model / ... when one is missing or out of range.
  explicit LlmJudge(const JudgeOptions& options);
  ~LlmJudge();
  LlmJudge(const LlmJudge&) = delete;
  LlmJudge& operator=(const LlmJudge&) = delete;

  // The cache first; else up to max_attempts requests, waiting backoff_s, 2·backoff_s, ... between them.
  Judgment judge(const std::string& question, const std::string& answer, const std::string& prediction);

  const std::string& model() const { return model_; }
  const std::string& endpoint() const { return endpoint_; }  // {base_url}/chat/completions
  size_t cached_judgments() const { return cache_.size(); }
  size_t cache_lines_skipped() const { return cache_lines_skipped_; }  // torn or foreign lines at load

  // The base URL judging would use: the option, else $OPENAI_BASE_URL; empty: judging is off.
  static std::string resolved_base_url(const JudgeOptions& options);

 private:
  struct Http;  // libcurl, kept out of this header
  // question, reference answer, prediction without newlines, judge model
  using CacheKey = std::tuple<std::string, std::string, std::string, std::string>;

  void load_cache();
  void append_to_cache(const CacheKey& key, const std::string& reply, const JudgeReply& parsed);

  std::string model_, endpoint_, api_key_, cache_path_;
  double timeout_s_ = 60, backoff_s_ = 2;
  int64_t max_attempts_ = 3;
  std::map<CacheKey, std::string> cache_;  // → the raw reply, parsed again on use
  size_t cache_lines_skipped_ = 0;
  bool cache_ends_torn_ = false;  // the file's last line has no '\n' (a crash mid-write)
  std::unique_ptr<Http> http_;
};

}  // namespace svqa
