#include "core/config/config_error.h"

#include <algorithm>
#include <cstdint>

namespace svqa {

std::string SourceLoc::str() const {
  if (line <= 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

void ErrorList::add(const SourceLoc& where, const std::string& path, const std::string& message) {
  std::string line = where.str();
  if (!line.empty()) line += ": ";
  if (!path.empty()) line += path + ": ";
  lines_.push_back(line + message);
}

void ErrorList::throw_if_any() const {
  if (!lines_.empty()) throw ConfigError(lines_);
}

static std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += (out.empty() ? "" : "\n") + l;
  return out;
}

ConfigError::ConfigError(std::vector<std::string> lines)
    : std::runtime_error(join_lines(lines)), lines_(std::move(lines)) {}

ConfigError::ConfigError(const SourceLoc& where, const std::string& path, const std::string& message)
    : ConfigError([&] {
        ErrorList e;
        e.add(where, path, message);
        return e.lines();
      }()) {}

static size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = SIZE_MAX;
  for (const auto& c : candidates) {
    size_t d = edit_distance(word, c);
    if (d < best_d) best_d = d, best = c;
  }
  // Suggest only plausible typos: at most a third of the word changed (and at least 1 edit allowed).
  size_t limit = std::max<size_t>(1, std::max(word.size(), best.size()) / 3);
  return best_d <= limit ? best : std::string();
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  std::string m = closest_match(word, candidates);
  return m.empty() ? std::string() : " (did you mean '" + m + "'?)";
}

}  // namespace svqa
