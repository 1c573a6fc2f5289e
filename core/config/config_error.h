#pragma once
// Errors in user input (YAML, overrides, registry names): one line each, located.

#include <stdexcept>
#include <string>
#include <vector>

namespace svqa {

// Where a config value came from: "experiments/x.yaml:12:5", or "--set a.b=1" (line 0).
struct SourceLoc {
  std::string file;
  int line = 0;    // 1-based; 0 = not from a file
  int column = 0;  // 1-based
  std::string str() const;
};

// Collects located error lines so one pass reports every problem, not only the first.
class ErrorList {
 public:
  void add(const SourceLoc& where, const std::string& path, const std::string& message);
  bool empty() const { return lines_.empty(); }
  size_t size() const { return lines_.size(); }
  const std::vector<std::string>& lines() const { return lines_; }
  // Throws ConfigError if anything was added.
  void throw_if_any() const;

 private:
  std::vector<std::string> lines_;
};

// A user-facing configuration error; what() is the lines joined by newlines.
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(std::vector<std::string> lines);
  ConfigError(const SourceLoc& where, const std::string& path, const std::string& message);
  const std::vector<std::string>& lines() const { return lines_; }

 private:
  std::vector<std::string> lines_;
};

// Closest candidate to `word` by edit distance, or "" if none is close enough to suggest.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

// "unknown key 'x' (did you mean 'y'?)"-style suffix: " (did you mean 'y'?)" or "".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace svqa
