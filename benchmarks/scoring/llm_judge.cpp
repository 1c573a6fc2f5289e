#include "benchmarks/scoring/llm_judge.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/config/experiment.h"

namespace svqa {
namespace {

std::string env(const std::string& name) {
  const char* v = name.empty() ? nullptr : std::getenv(name.c_str());
  return v ? v : "";
}

// Enough of a reply or body to tell what went wrong, on one line.
std::string snippet(const std::string& text) {
  std::string s = text.size() > 200 ? text.substr(0, 200) + "..." : text;
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

// Model outputs cut at max_new_tokens can end inside a UTF-8 sequence: replace, never throw.
std::string dump(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

// The value of 'key' or "key" when it is a quoted string.
std::optional<std::string> quoted_value(const std::string& text, const std::string& key) {
  const std::regex re("(['\"])" + key + "\\1\\s*:\\s*(?:'([^']*)'|\"([^\"]*)\")");
  std::smatch m;
  if (!std::regex_search(text, m, re)) return std::nullopt;
  return m[2].matched ? m[2].str() : m[3].str();
}

// int(score) as Python does for a number: truncation toward zero; a quoted number is accepted too.
std::optional<int64_t> score_value(const std::string& text) {
  static const std::regex re(
      R"((['"])score\1\s*:\s*(?:(-?\d+(?:\.\d+)?)|'\s*(-?\d+(?:\.\d+)?)\s*'|"\s*(-?\d+(?:\.\d+)?)\s*"))");
  std::smatch m;
  if (!std::regex_search(text, m, re)) return std::nullopt;
  for (int group = 2; group <= 4; ++group)
    if (m[group].matched) return static_cast<int64_t>(std::trunc(std::stod(m[group].str())));
  return std::nullopt;
}

std::string seconds_text(double s) {
  std::ostringstream o;
  o << s;
  return o.str();
}

}  // namespace

const char* verdict_name(JudgeVerdict v) {
  switch (v) {
    case JudgeVerdict::yes: return "yes";
    case JudgeVerdict::no: return "no";
    case JudgeVerdict::neither: break;
  }
  return "neither";
}

JudgeReply parse_judge_reply(const std::string& text) {
  JudgeReply r;
  std::optional<std::string> pred = quoted_value(text, "pred");
  if (!pred) pred = quoted_value(text, "prev");  // the reference script's fallback key
  if (!pred) return r;
  r.parsed = true;
  std::string lower = *pred;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  // As the script: "yes" anywhere wins, then "no" anywhere (so "not sure" counts as no).
  r.verdict = lower.find("yes") != std::string::npos  ? JudgeVerdict::yes
              : lower.find("no") != std::string::npos ? JudgeVerdict::no
                                                       : JudgeVerdict::neither;
  r.score = score_value(text);
  return r;
}

const std::string& judge_system_message() {
  static const std::string message =
      "You are an intelligent chatbot designed for evaluating the correctness of generative outputs for "
      "question-answer pairs. Your task is to compare the predicted answer with the correct answer and determine if "
      "they match meaningfully. Here's how you can accomplish the task:------##INSTRUCTIONS: - Focus on the "
      "meaningful match between the predicted answer and the correct answer.\n- Consider synonyms or paraphrases as "
      "valid matches.\n- Evaluate the correctness of the prediction compared to the answer.";
  return message;
}

std::string judge_user_message(const std::string& question, const std::string& answer, const std::string& prediction) {
  return "Please evaluate the following video-based question-answer pair:\n\nQuestion: " + question +
         "\nCorrect Answer: " + answer + "\nPredicted Answer: " + without_newlines(prediction) +
         "\n\nProvide your evaluation only as a yes/no and score where the score is an integer value between 0 and 5, "
         "with 5 indicating the highest meaningful match. Please generate the response in the form of a Python "
         "dictionary string with keys 'pred' and 'score', where value of 'pred' is  a string of 'yes' or 'no' and "
         "value of 'score' is in INTEGER, not STRING.DO NOT PROVIDE ANY OTHER OUTPUT TEXT OR EXPLANATION. Only provide "
         "the Python dictionary string. For example, your response should look like this: {'pred': 'yes', 'score': "
         "4.8}.";
}

std::string without_newlines(std::string text) {
  text.erase(std::remove(text.begin(), text.end(), '\n'), text.end());
  return text;
}

// One reusable libcurl handle (keeps the connection alive between questions).
struct LlmJudge::Http {
  CURL* curl = nullptr;
  Http() {
    static std::once_flag global;
    std::call_once(global, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    curl = curl_easy_init();
    if (!curl) throw std::runtime_error("judge: libcurl could not create a handle");
  }
  ~Http() { curl_easy_cleanup(curl); }

  struct Response {
    std::string error;  // empty: a response came (any status)
    long status = 0;
    std::string body;
  };

  Response post(const std::string& url, const std::string& body, const std::string& api_key, double timeout_s) {
    Response r;
    char curl_error[CURL_ERROR_SIZE] = "";
    curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
    headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip (1 s with some servers)
    if (!api_key.empty()) headers = curl_slist_append(headers, ("Authorization: Bearer " + api_key).c_str());
    curl_easy_reset(curl);
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, std::max(1L, static_cast<long>(std::lround(timeout_s * 1000))));
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // timeouts without SIGALRM
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "svqa-judge");
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_error);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, +[](char* data, size_t size, size_t n, void* out) {
      static_cast<std::string*>(out)->append(data, size * n);
      return size * n;
    });
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &r.body);
    const CURLcode code = curl_easy_perform(curl);
    curl_slist_free_all(headers);
    if (code == CURLE_OPERATION_TIMEDOUT) r.error = "timeout after " + seconds_text(timeout_s) + " s";
    else if (code != CURLE_OK)
      r.error = std::string("connection error: ") + (curl_error[0] ? curl_error : curl_easy_strerror(code));
    else curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r.status);
    return r;
  }
};

std::string LlmJudge::resolved_base_url(const JudgeOptions& options) {
  return options.base_url.empty() ? env("OPENAI_BASE_URL") : options.base_url;
}

LlmJudge::LlmJudge(const JudgeOptions& options)
    : timeout_s_(options.timeout_s), backoff_s_(options.backoff_s), max_attempts_(options.max_attempts) {
  std::string base_url = resolved_base_url(options);
  if (base_url.empty()) throw std::invalid_argument("judge.base_url: not given and $OPENAI_BASE_URL is not set");
  while (!base_url.empty() && base_url.back() == '/') base_url.pop_back();
  endpoint_ = base_url + "/chat/completions";
  model_ = options.model.empty() ? env("SVQA_JUDGE_MODEL") : options.model;
  if (model_.empty()) throw std::invalid_argument("judge.model: not given and $SVQA_JUDGE_MODEL is not set");
  if (!(timeout_s_ > 0)) throw std::invalid_argument("judge.timeout_s: must be > 0, got " + seconds_text(timeout_s_));
  if (max_attempts_ < 1)
    throw std::invalid_argument("judge.max_attempts: must be >= 1, got " + std::to_string(max_attempts_));
  if (!(backoff_s_ >= 0)) throw std::invalid_argument("judge.backoff_s: must be >= 0, got " + seconds_text(backoff_s_));
  api_key_ = env(options.api_key_env);  // unset: no Authorization header (local servers)
  cache_path_ = options.cache;
  load_cache();
  http_ = std::make_unique<Http>();
}

LlmJudge::~LlmJudge() = default;

void LlmJudge::load_cache() {
  if (cache_path_.empty()) return;
  std::ifstream in(cache_path_, std::ios::binary);
  if (!in) return;  // not written yet
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    // A line cut short by a crash (or not ours) is skipped: that question is judged again.
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    auto text = [&](const char* key) -> const std::string* {
      return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get_ptr<const std::string*>() : nullptr;
    };
    const std::string *q = text("question"), *a = text("answer"), *p = text("prediction"), *m = text("model"),
                      *reply = text("reply");
    if (!q || !a || !p || !m || !reply || !parse_judge_reply(*reply).parsed) {
      ++cache_lines_skipped_;
      continue;
    }
    cache_[{*q, *a, *p, *m}] = *reply;
  }
  in.clear();
  in.seekg(0, std::ios::end);
  if (in.tellg() > 0) {
    in.seekg(-1, std::ios::end);
    cache_ends_torn_ = in.get() != '\n';
  }
}

void LlmJudge::append_to_cache(const CacheKey& key, const std::string& reply, const JudgeReply& parsed) {
  cache_[key] = reply;
  if (cache_path_.empty()) return;
  const std::filesystem::path path(cache_path_);
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::app);
  if (!out) throw std::runtime_error("judge cache " + cache_path_ + ": cannot open for appending");
  const auto& [question, answer, prediction, model] = key;
  nlohmann::json line = {{"model", model},   {"question", question}, {"answer", answer}, {"prediction", prediction},
                         {"reply", reply},   {"verdict", verdict_name(parsed.verdict)},
                         {"score", parsed.score ? nlohmann::json(*parsed.score) : nlohmann::json(nullptr)}};
  if (cache_ends_torn_) out << "\n";  // end the torn line so that this one stays readable
  cache_ends_torn_ = false;
  out << dump(line) << "\n";
  out.flush();
  if (!out) throw std::runtime_error("judge cache " + cache_path_ + ": write failed");
}

namespace {

// The chat-completions request of one judgment: the reference script's messages, greedy.
nlohmann::json judge_request(const std::string& model, const std::string& question, const std::string& answer,
                             const std::string& prediction) {
  return {{"model", model},
          {"messages",
           {{{"role", "system"}, {"content", judge_system_message()}},
            {{"role", "user"}, {"content", judge_user_message(question, answer, prediction)}}}},
          {"temperature", 0},
          {"max_tokens", 300}};
}

// The reply text of a chat-completions response (choices[0].message.content); none, with `error`
// saying why, for another status, bad JSON or a response without it.
std::optional<std::string> reply_content(long status, const std::string& body, std::string& error) {
  if (status < 200 || status >= 300) {
    error = "HTTP " + std::to_string(status) + (body.empty() ? std::string() : ": " + snippet(body));
    return std::nullopt;
  }
  const nlohmann::json reply = nlohmann::json::parse(body, nullptr, false);
  if (reply.is_discarded()) {
    error = "bad JSON in the response: " + snippet(body);
    return std::nullopt;
  }
  if (reply.is_object() && reply.contains("choices") && reply["choices"].is_array() && !reply["choices"].empty()) {
    const auto& choice = reply["choices"][0];
    if (choice.is_object() && choice.contains("message") && choice["message"].is_object() &&
        choice["message"].contains("content") && choice["message"]["content"].is_string())
      return choice["message"]["content"].get<std::string>();
  }
  error = "no choices[0].message.content in the response: " + snippet(body);
  return std::nullopt;
}

}  // namespace

Judgment LlmJudge::judge(const std::string& question, const std::string& answer, const std::string& prediction) {
  const CacheKey key{question, answer, without_newlines(prediction), model_};
  Judgment result;
  auto take = [&](const std::string& reply, const JudgeReply& parsed) {
    result.ok = true;
    result.verdict = parsed.verdict;
    result.score = parsed.score;
    result.reply = reply;
    result.error.clear();
  };
  if (const auto hit = cache_.find(key); hit != cache_.end()) {
    take(hit->second, parse_judge_reply(hit->second));
    result.cached = true;
    return result;
  }

  const std::string body = dump(judge_request(model_, question, answer, prediction));
  double wait_s = backoff_s_;
  for (int64_t attempt = 1; attempt <= max_attempts_; ++attempt) {
    if (attempt > 1) {
      std::this_thread::sleep_for(std::chrono::duration<double>(wait_s));
      wait_s *= 2;
    }
    ++result.attempts;
    const Http::Response response = http_->post(endpoint_, body, api_key_, timeout_s_);
    if (!response.error.empty()) {
      result.error = response.error;
      continue;
    }
    const std::optional<std::string> content = reply_content(response.status, response.body, result.error);
    if (!content) continue;
    result.reply = *content;
    const JudgeReply parsed = parse_judge_reply(result.reply);
    if (!parsed.parsed) {
      result.error = "unparseable reply: " + snippet(result.reply);
      continue;
    }
    take(result.reply, parsed);
    append_to_cache(key, result.reply, parsed);
    return result;
  }
  return result;  // every try failed: not cached, so a rerun asks again
}

}  // namespace svqa
