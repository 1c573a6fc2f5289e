#pragma once
// Clock strings of annotation files ("0:04:13", "04:13", "[0:12:00 - 0:13:00]") as seconds.

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace svqa {

// The ':'-separated parts of a clock string, each one or more digits ("00:12450" → {"00", "12450"});
// nullopt if anything else is in it. Surrounding whitespace is ignored.
std::optional<std::vector<std::string>> clock_parts(const std::string& s);

// Σ int(part)·60^i over the parts from the right: the rule of StreamingBench's and LVBench's code,
// so "0:04:13" → 253, "04:13" → 253, "00:24" → 24 (MM:SS), "00:12450" → 12450. nullopt as well past
// kMaxClockSeconds (a stamp of 10^23 hours is a broken file, not a time: it overflowed to a negative
// number where it was printed).
inline constexpr double kMaxClockSeconds = 1e7;  // 115 days
std::optional<double> clock_seconds(const std::string& s);

// "A - B" or "A-B", optionally in brackets ("[…]", or closed by a full-width "】"): both ends.
std::optional<std::pair<double, double>> clock_interval(const std::string& s);

}  // namespace svqa
