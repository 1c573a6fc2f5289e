#include "benchmarks/datasets/clock_time.h"

namespace svqa {
namespace {

std::string trim(const std::string& s) {
  const char* ws = " \t\n\r\f\v";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::optional<std::vector<std::string>> clock_parts(const std::string& s) {
  const std::string t = trim(s);
  std::vector<std::string> parts(1);
  for (const char c : t) {
    if (c == ':') parts.emplace_back();
    else if (c >= '0' && c <= '9') parts.back() += c;
    else return std::nullopt;
  }
  for (const auto& p : parts)
    if (p.empty()) return std::nullopt;
  return parts;
}

std::optional<double> clock_seconds(const std::string& s) {
  const auto parts = clock_parts(s);
  if (!parts || parts->size() > 3) return std::nullopt;
  double seconds = 0;
  for (const auto& p : *parts) {
    if (p.size() > 9) return std::nullopt;  // past kMaxClockSeconds whatever its place
    seconds = seconds * 60 + std::stod(p);
  }
  if (seconds > kMaxClockSeconds) return std::nullopt;
  return seconds;
}

std::optional<std::pair<double, double>> clock_interval(const std::string& s) {
  std::string t = trim(s);
  if (starts_with(t, "[")) t = t.substr(1);
  if (starts_with(t, "\xe3\x80\x90")) t = t.substr(3);  // 【
  if (ends_with(t, "]")) t.pop_back();
  if (ends_with(t, "\xe3\x80\x91")) t.resize(t.size() - 3);  // 】
  const size_t dash = t.find('-');
  if (dash == std::string::npos) return std::nullopt;
  const auto a = clock_seconds(t.substr(0, dash));
  const auto b = clock_seconds(t.substr(dash + 1));
  if (!a || !b) return std::nullopt;
  return std::make_pair(*a, *b);
}

}  // namespace svqa
