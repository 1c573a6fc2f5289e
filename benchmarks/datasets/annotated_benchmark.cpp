#include "benchmarks/datasets/annotated_benchmark.h"

#include <filesystem>
#include <stdexcept>

namespace svqa {

std::vector<Stream> AnnotatedBenchmark::streams() {
  std::vector<LoadProblem> problems;
  std::vector<Stream> out = load(problems);
  std::string message;
  for (const auto& p : problems)
    if (p.fatal) message += (message.empty() ? "" : "\n") + p.where + ": " + p.what;
  if (!message.empty()) throw std::runtime_error(message);
  return out;
}

std::string resolve_video(const std::string& video_root, const std::string& annotations, const std::string& path,
                          int keep) {
  namespace fs = std::filesystem;
  const fs::path root = video_root.empty() ? fs::path(annotations).parent_path() : fs::path(video_root);
  const fs::path p = fs::path(path).lexically_normal();
  if (keep <= 0) return (p.is_absolute() ? p : root / p).string();
  std::vector<fs::path> parts;
  for (const auto& part : p)
    if (!part.empty() && part != "." && part != p.root_path()) parts.push_back(part);
  fs::path tail;
  for (size_t i = parts.size() > size_t(keep) ? parts.size() - size_t(keep) : 0; i < parts.size(); ++i) tail /= parts[i];
  return (root / tail).string();
}

std::string option_letter(size_t i) {
  if (i >= kMaxOptions)
    throw std::out_of_range("option " + std::to_string(i + 1) + ": at most " + std::to_string(kMaxOptions) +
                            " options (letters A to Z)");
  return std::string(1, static_cast<char>('A' + i));
}

std::string strip_option_letter(const std::string& option, size_t i) {
  const std::string prefix = option_letter(i) + ".";
  if (option.compare(0, prefix.size(), prefix) != 0) return option;
  const size_t text = option.find_first_not_of(' ', prefix.size());
  return text == std::string::npos ? "" : option.substr(text);
}

int find_option(const std::vector<std::string>& options, const std::string& answer, bool last) {
  int found = -1;
  for (size_t i = 0; i < options.size(); ++i)
    if (options[i] == answer) {
      found = static_cast<int>(i);
      if (!last) break;
    }
  return found;
}

void check_options(AnnotationReader& r, const std::string& at, const Question& q, const char* options_key,
                   const char* answer_key) {
  if (q.options.empty()) return;
  if (q.options.size() > kMaxOptions) {
    r.fatal(at_key(at, options_key), std::to_string(q.options.size()) + " options: at most " +
                                         std::to_string(kMaxOptions) + " (one per letter A to Z)");
    return;
  }
  for (size_t i = 0; i < q.options.size(); ++i) {
    if (q.options[i].empty()) r.note(at_index(at_key(at, options_key), i), "empty option text");
    for (size_t j = i + 1; j < q.options.size(); ++j)
      if (!q.options[i].empty() && q.options[i] == q.options[j])
        r.note(at_key(at, options_key), "options " + option_letter(i) + " and " + option_letter(j) + " are the same text " +
                                          nlohmann::json(q.options[i]).dump() +
                                          (q.options[i] == q.answer ? " and it is the gold answer" : ""));
  }
  if (!q.answer.empty() && find_option(q.options, q.answer) < 0 && q.answer_letter.empty())
    r.note(at_key(at, answer_key), "the answer " + nlohmann::json(q.answer).dump() +
                                     " is not among the options: the question cannot be scored");
}

}  // namespace svqa
