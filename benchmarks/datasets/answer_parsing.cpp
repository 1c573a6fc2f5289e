#include "benchmarks/datasets/answer_parsing.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "benchmarks/datasets/annotated_benchmark.h"
#include "benchmarks/datasets/ovobench_rules.h"
#include "core/io/unicode_text.h"

namespace svqa {
namespace {

// Every rule's scorer is Python: "strip" is str.strip() (Unicode whitespace) and \w is Python 3's
// (core/io/unicode_text.h).

size_t utf8_length(unsigned char lead) { return lead < 0xC0 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4; }

// The first character (code point) of s, as Python's s[0]; "" for "".
std::string first_char(const std::string& s) { return s.empty() ? "" : s.substr(0, utf8_length(s[0])); }

// The character ending just before byte `end` (Python's s[i-1:i] for the ')' at i).
std::string char_before(const std::string& s, size_t end) {
  if (end == 0) return "";
  size_t b = end - 1;
  while (b > 0 && (static_cast<unsigned char>(s[b]) & 0xC0) == 0x80) --b;
  return s.substr(b, end - b);
}

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
}

std::string letter(size_t i) { return option_letter(i); }

std::string rekv_options(const Question& q, const char* label_open, const char* label_close) {
  std::string s;
  for (size_t i = 0; i < q.options.size(); ++i) s += "\n" + (label_open + letter(i) + label_close) + " " + q.options[i];
  return s;
}

const char* const kStreamingBenchPrompt =
    "You are an advanced video question-answering AI assistant. You have been provided with some frames from the "
    "video and a multiple-choice question related to the video. Your task is to carefully analyze the video and "
    "provide the best answer to question, choosing from the four options provided. Respond with only the letter (A, "
    "B, C, or D) of the correct option.\n\nQuestion: ";

const char* const kStreamingBenchSqaPrompt =
    "You are an advanced video question-answering AI assistant. You have been provided with a video and a "
    "multiple-choice question related to the video. Your task is to carefully analyze the video and the provided "
    "context to answer the question, choosing from the four options provided. Respond with only the letter (A, B, C, "
    "or D) of the correct option.\n\n";
const char* const kStreamingBenchSqaQuestion =
    "\n\nHere is the question. Answer it and don't confuse it with the previous conversation.\nQuestion: ";

const char* const kCgBenchSystem =
    "You will be provided with sampled frames from a video, along with a multiple-choice question that includes a "
    "question and several answer options.\nYour task is to analyze the provided frames, infer the most plausible "
    "answer based on the visual information.\nIf the video does not provide enough information, infer the answer "
    "based on the options available and still provide a result. Therefore, In all cases, an answer must be given.\n"
    "Only output the answer in the following format:\n\n```json\n{\"result\": \"option\"}\n```\n\nThe \"option\" is "
    "the uppercase letter corresponding to your answer.\n\n";

const char* const kVideoMmePrompt =
    "Select the best answer to the following multiple-choice question based on the video. Respond with only the "
    "letter (A, B, C, or D) of the correct option.\n";

const char* const kMlvuSystem =
    "Carefully watch this video and pay attention to every detail. Based on your observations, select the best "
    "option that accurately addresses the question.";

// re.sub(r'(?<=:\s)([A-Za-z_]\w*)', r'"\1"', s): quote a bare identifier after ":" and one whitespace.
std::string quote_bare_identifiers(const std::string& s) {
  auto ident_start = [](char32_t c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  std::string out;
  char32_t before_previous = 0, previous = 0;  // the two characters before s[i]
  for (size_t i = 0; i < s.size();) {
    size_t j = i;
    char32_t c = next_code_point(s, j);
    if (before_previous == ':' && python_isspace(previous) && ident_start(c)) {
      for (size_t k = j; k < s.size(); j = k) {  // \w*
        const char32_t w = next_code_point(s, k);
        if (!python_is_word(w)) break;
        c = w;
      }
      out += "\"" + s.substr(i, j - i) + "\"";
      before_previous = 0;  // the match ends in a word character: no lookbehind hit right after it
    } else {
      out.append(s, i, j - i);
      before_previous = previous;
    }
    previous = c;
    i = j;
  }
  return out;
}

}  // namespace

std::vector<std::string> dotted_options(const Question& q) {
  std::vector<std::string> o = q.official_options.empty() ? q.options : q.official_options;
  if (o.empty() || starts_with(o[0], "A.")) return o;
  for (size_t i = 0; i < o.size(); ++i) o[i] = letter(i) + ". " + o[i];
  return o;
}

std::string rule_name(AnswerRule rule) {
  switch (rule) {
    case AnswerRule::rekv: return "rekv";
    case AnswerRule::streamingbench: return "streamingbench";
    case AnswerRule::cgbench: return "cgbench";
    case AnswerRule::lvbench: return "lvbench";
    case AnswerRule::videomme: return "videomme";
    case AnswerRule::mlvu: return "mlvu";
    case AnswerRule::ovobench: return "ovobench";
  }
  return "?";
}

std::optional<AnswerRule> rule_from_name(const std::string& name) {
  for (const AnswerRule r : {AnswerRule::rekv, AnswerRule::streamingbench, AnswerRule::cgbench, AnswerRule::lvbench,
                             AnswerRule::videomme, AnswerRule::mlvu, AnswerRule::ovobench})
    if (rule_name(r) == name) return r;
  return std::nullopt;
}

std::string format_question(AnswerRule rule, const Question& q) {
  if (rule == AnswerRule::ovobench) return ovobench_prompt(q);  // its forward probes have prompts, not options
  if (q.options.empty()) return q.text;
  switch (rule) {
    case AnswerRule::rekv:
    case AnswerRule::lvbench:  // LVBench's code has no prompt: ReKV's, with its own parser
      return "Question: " + q.text + "\nOptions:" + rekv_options(q, "(", ")") + "\nOnly give the best option.";
    case AnswerRule::streamingbench: {
      // SQA's questions carry their context: StreamingBenchSQA.py's PROMPT_TEMPLATE, else StreamingBench.py's.
      const auto context = q.tags.find("sqa_context");
      std::string s = context == q.tags.end() ? kStreamingBenchPrompt + q.text
                                              : kStreamingBenchSqaPrompt + context->second + kStreamingBenchSqaQuestion + q.text;
      s += "\n\nOptions:";
      for (const auto& o : dotted_options(q)) s += "\n" + o;
      return s + "\n\nThe best option is:";
    }
    case AnswerRule::cgbench: {
      std::string s = kCgBenchSystem + ("Question: " + q.text + "\n\n");
      for (size_t i = 0; i < q.options.size(); ++i) s += (i ? "\n" : "") + letter(i) + ":" + q.options[i];
      return s + "\n\n";
    }
    case AnswerRule::videomme: {
      std::string s = kVideoMmePrompt + q.text;
      for (const auto& o : dotted_options(q)) s += "\n" + o;
      return s + "\nThe best answer is:";
    }
    case AnswerRule::mlvu:  // the system prompt opens the user turn: the sinks hold the backbone's own
      return kMlvuSystem + ("\nQuestion: " + q.text + "\nOptions:") + rekv_options(q, "(", ")") +
             " Only give the best option.";
    case AnswerRule::ovobench: return ovobench_prompt(q);
  }
  return q.text;
}

std::string answer_prefix(AnswerRule rule, const Question& q) {
  if (q.options.empty()) return "";
  if (rule == AnswerRule::rekv || rule == AnswerRule::lvbench) return "Best option: (";
  if (rule == AnswerRule::mlvu) return "Best Option: (";
  return "";
}

std::string gold_letter(AnswerRule rule, const Question& q) {
  const auto first = std::find(q.options.begin(), q.options.end(), q.answer);
  const std::string by_text =
      q.answer.empty() || first == q.options.end() ? "" : letter(static_cast<size_t>(first - q.options.begin()));
  if (rule == AnswerRule::rekv) return by_text.empty() ? q.answer_letter : by_text;
  return q.answer_letter.empty() ? by_text : q.answer_letter;
}

std::string rekv_letter(const std::string& output) {
  const std::string s = python_strip(output);
  const size_t paren = s.find(')');
  return paren == std::string::npos ? first_char(s) : char_before(s, paren);
}

std::string streamingbench_letter(const std::string& output) { return first_char(output); }

std::string lvbench_letter(const std::string& output) {
  std::string s = python_strip(output);
  s = python_strip(s.substr(0, s.find(')')));
  if (const size_t open = s.find('('); open != std::string::npos) {
    const size_t next = s.find('(', open + 1);
    s = python_strip(s.substr(open + 1, next == std::string::npos ? std::string::npos : next - open - 1));
  }
  return first_char(s.substr(0, s.find(' ')));
}

std::string videomme_letter(const std::string& output) {
  std::string s = python_strip(output);
  // The scorer's list, two pairs fused by its missing commas.
  for (const char* prefix : {"The best answer is", "The correct answer is", "The answer is", "The answer",
                             "The best option isThe correct option is", "Best answer:Best option:", "Answer:",
                             "Option:", "The correct answer", "The correct option"})
    replace_all(s, prefix, "");
  // The scorer's "more than ten words and no A-D: no answer" ends the same way as "no A-D".
  const size_t abcd = s.find_first_of("ABCD");
  return abcd == std::string::npos ? "" : s.substr(abcd, 1);
}

std::string mlvu_reading(const std::string& output) {
  const std::string s = python_strip(output);
  const size_t paren = s.find(')');
  return paren == std::string::npos ? s : char_before(s, paren);
}

CgBenchReading cgbench_reading(const std::string& response) {
  CgBenchReading out;
  if (response.empty()) return out;
  const size_t start = response.find("```json");
  if (start != std::string::npos) {
    const size_t end = response.find("```", start + 7);
    const std::string content = end == std::string::npos ? "" : python_strip(response.substr(start + 7, end - start - 7));
    if (!content.empty()) {
      try {
        const auto j = nlohmann::json::parse(quote_bare_identifiers(content));
        if (j.is_object() && j.contains("result")) {
          out.from_json = true;
          out.result = j["result"].is_string() ? j["result"].get<std::string>() : j["result"].dump();
          return out;
        }
      } catch (const nlohmann::json::exception&) {  // as the script: fall back to the letters
      }
    }
  }
  size_t i = 0;
  char32_t previous = ' ';
  while (i < response.size()) {
    const size_t at = i;
    const char32_t c = next_code_point(response, i);
    if (c >= 'A' && c <= 'H' && !python_is_word(previous)) {
      size_t k = i;
      if (k >= response.size() || !python_is_word(next_code_point(response, k))) out.letters.push_back(response.substr(at, 1));
    }
    previous = c;
  }
  return out;
}

Verdict judge(AnswerRule rule, const Question& q, const std::string& output) {
  using O = Verdict::Outcome;
  const std::string gold = gold_letter(rule, q);
  auto by = [&](const std::string& parsed) {
    return Verdict{!gold.empty() && parsed == gold ? O::correct : O::wrong, parsed};
  };
  switch (rule) {
    case AnswerRule::rekv: return by(rekv_letter(output));  // empty output: wrong
    case AnswerRule::streamingbench:  // count.py reads the real-time and the sqa task alike
      if (output.empty()) return {O::unanswered, ""};  // no response: skipped by count.py
      return by(streamingbench_letter(output));
    case AnswerRule::lvbench: return by(lvbench_letter(output));
    case AnswerRule::videomme: {
      const std::string l = videomme_letter(output);
      if (l.empty()) return {O::unanswered, ""};  // excluded from the denominator
      return by(l);
    }
    case AnswerRule::mlvu: return by(mlvu_reading(output));
    case AnswerRule::ovobench: return ovobench_judge(q, output);
    case AnswerRule::cgbench: {
      const CgBenchReading r = cgbench_reading(output);
      if (r.from_json) return by(r.result);
      if (r.letters.empty()) return {O::unanswered, ""};  // no result
      std::string joined;
      for (const auto& l : r.letters) joined += (joined.empty() ? "" : ",") + l;
      const bool hit = std::find(r.letters.begin(), r.letters.end(), gold) != r.letters.end();
      return {!gold.empty() && hit ? O::correct : O::wrong, joined};
    }
  }
  return {O::unanswered, ""};
}

std::string RuleBenchmark::question_text(const Question& q) const { return format_question(answer_rule(), q); }
std::string RuleBenchmark::answer_prefix(const Question& q) const { return svqa::answer_prefix(answer_rule(), q); }
Verdict RuleBenchmark::verdict(const Question& q, const std::string& output) const { return judge(answer_rule(), q, output); }
bool RuleBenchmark::has_gold(const Question& q) const { return !gold_letter(answer_rule(), q).empty(); }

}  // namespace svqa
