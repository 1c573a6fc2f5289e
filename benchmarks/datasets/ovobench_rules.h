#pragma once
// OVO-Bench's prompts (constant.py, built as utils/OVOBench.py's build_prompt) and its scorer's rules
// (utils/OVOBenchScore.py), one question at a time. The aggregation (task, group, total) is in
// benchmarks/scoring/ovobench_score.h.

#include <string>

#include "engine/benchmark.h"

namespace svqa {

// The task's prompt: BR_PROMPT_TEMPLATE with the question and "A. x; B. y;" for the multiple-choice
// tasks; REC_PROMPT_TEMPLATE with "How many times did they <activity>?"; SSR's with the probe's step;
// CRR's with the record's question. Question::text holds what the template takes.
std::string ovobench_prompt(const Question& q);

// The scorer's rules, quirks included (docs/benchmarks.md):
//  multiple choice: correct iff the gold letter occurs anywhere in the response (`gt in response`:
//    "Answer: B" holds the letter A); parsed = every option letter that occurs, "A,B";
//  REC: every decimal digit of the response (re's \d, Unicode) joined equals the count; parsed = the digits;
//  SSR, CRR: the response is exactly "Y" (gold Yes) or "N" (gold No), or the gold word occurs in it
//    ("No" in "Not sure"); parsed = "Y"/"N" when exact, else the words of Yes, No that occur.
// An empty response is wrong, as the scorer's None. Never unanswered.
Verdict ovobench_judge(const Question& q, const std::string& output);

// re.findall(r'\d+', s) joined.
std::string ovobench_digits(const std::string& output);

}  // namespace svqa
