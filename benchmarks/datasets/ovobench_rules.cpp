#include "benchmarks/datasets/ovobench_rules.h"

#include <initializer_list>

#include "core/io/unicode_text.h"

namespace svqa {
namespace {

// constant.py BR_PROMPT_TEMPLATE
const char* const kBrPrompt =
    "\n"
    "Question: {}\n"
    "Options:\n"
    "{}\n"
    "\n"
    "Respond only with the letter corresponding to your chosen option (e.g., A, B, C). \n"
    "Do not include any additional text or explanation in your response.\n";
// constant.py REC_PROMPT_TEMPLATE
const char* const kRecPrompt =
    "\n"
    "You're watching a video in which people may perform a certain type of action repetively. \n"
    "The person performing this kind of action are referred to as 'they' in the following statement.\n"
    "You're task is to count how many times have different people in the video perform this kind of action in total.\n"
    "One complete motion counts as one. \n"
    "Now, answer the following question: {}\n"
    "Provide your answer as a single number (e.g., 0, 1, 2, 3…) indicating the total count.\n"
    "Do not include any additional text or explanation in your response.\n";
// constant.py SSR_PROMPT_TEMPLATE
const char* const kSsrPrompt =
    "\n"
    "You're watching a tutorial video which contain a sequential of steps. \n"
    "The following is one step from the whole procedures: \n"
    "{}\n"
    "Your task is to determine if the man or woman in the video is currently performing this step.\n"
    "Answer only with “Yes” or “No”.\n"
    "Do not include any additional text or explanation in your response.\n";
// constant.py CRR_PROMPT_TEMPLATE
const char* const kCrrPrompt =
    "\n"
    "You're responsible of answering questions based on the video content. \n"
    "The following question are relevant to the latest frames, i.e. the end of the video.\n"
    "{}\n"
    "Decide whether existing visual content, especially latest frames, i.e. frames that near the end of the video, provide enough information for answering the question.\n"
    "Answer only with “Yes” or “No”.\n"
    "Do not include any additional text or explanation in your response.\n";

// str.format with positional "{}"s: each argument goes in as is (braces in it are not fields).
std::string fill(const char* templ, std::initializer_list<std::string> args) {
  std::string s = templ;
  size_t from = 0;
  for (const auto& a : args) {
    const size_t at = s.find("{}", from);
    s.replace(at, 2, a);
    from = at + a.size();
  }
  return s;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string joined(std::initializer_list<std::pair<bool, std::string>> found) {
  std::string out;
  for (const auto& [hit, text] : found)
    if (hit) out += (out.empty() ? "" : ",") + text;
  return out;
}

}  // namespace

std::string ovobench_prompt(const Question& q) {
  if (q.category == "REC") return fill(kRecPrompt, {q.text});
  if (q.category == "SSR") return fill(kSsrPrompt, {q.text});
  if (q.category == "CRR") return fill(kCrrPrompt, {q.text});
  std::string options;
  for (size_t i = 0; i < q.options.size(); ++i)
    options += (i ? "; " : "") + std::string(1, char('A' + i)) + ". " + q.options[i];
  return fill(kBrPrompt, {q.text, options + ";"});
}

std::string ovobench_digits(const std::string& output) {
  std::string digits;
  for (size_t i = 0; i < output.size();) {
    const size_t at = i;
    if (python_is_decimal(next_code_point(output, i))) digits.append(output, at, i - at);
  }
  return digits;
}

Verdict ovobench_judge(const Question& q, const std::string& output) {
  using O = Verdict::Outcome;
  const std::string& gold = q.answer_letter;
  if (q.category == "REC") {
    const std::string digits = ovobench_digits(output);
    return {!gold.empty() && digits == gold ? O::correct : O::wrong, digits};
  }
  if (q.category == "SSR" || q.category == "CRR") {
    const bool exact = (output == "N" && gold == "No") || (output == "Y" && gold == "Yes");
    const std::string parsed =
        output == "Y" || output == "N" ? output : joined({{contains(output, "Yes"), "Yes"}, {contains(output, "No"), "No"}});
    return {exact || (!gold.empty() && contains(output, gold)) ? O::correct : O::wrong, parsed};
  }
  std::string letters;
  for (size_t i = 0; i < q.options.size(); ++i) {
    const std::string l(1, char('A' + i));
    if (contains(output, l)) letters += (letters.empty() ? "" : ",") + l;
  }
  return {!gold.empty() && contains(output, gold) ? O::correct : O::wrong, letters};
}

}  // namespace svqa
