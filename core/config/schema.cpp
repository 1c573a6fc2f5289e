#include "core/config/schema.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <regex>
#include <sstream>

namespace svqa {

std::string join_path(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::string format_number(double v) {
  std::ostringstream s;
  s.precision(15);
  s << v;
  std::string out = s.str();
  if (std::isfinite(v) && out.find_first_of(".e") == std::string::npos) out += ".0";
  return out;
}

std::string ValueReader<std::string>::yaml(const std::string& v) {
  std::string out = "\"";
  for (char c : v) out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

void check_known_keys(const ConfigNode& map, const std::string& path, const std::vector<std::string>& known,
                      ErrorList& errors) {
  for (const auto& e : map.entries) {
    bool found = false;
    for (const auto& k : known) found = found || k == e.key;
    if (found) continue;
    std::string hint = did_you_mean(e.key, known);
    if (hint.empty()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      hint = known.empty() ? " (this section takes no keys)" : " (known keys: " + list + ")";
    }
    errors.add(e.key_loc, join_path(path, e.key), "unknown key" + hint);
  }
}

std::string format_bound(double v) {
  return std::abs(v) < 9007199254740992.0 && v == std::floor(v) ? std::to_string(static_cast<int64_t>(v)) : format_number(v);
}

// "a positive integer", "a number in [0, 1]", ...
static std::string expectation(const char* noun_int_or_number, const FieldInfo& f) {
  const std::string noun = noun_int_or_number;
  const std::string article = noun == "integer" ? "an " : "a ";
  const auto bound = [&](double v) { return noun == "integer" ? format_bound(v) : format_number(v); };
  if (f.min && !f.max) {
    if (*f.min == 1 && noun == "integer") return "a positive integer";
    if (*f.min == 0) return "a non-negative " + noun;
    return article + noun + " >= " + bound(*f.min);
  }
  if (f.min && f.max) return article + noun + " in [" + bound(*f.min) + ", " + bound(*f.max) + "]";
  if (f.max) return article + noun + " <= " + bound(*f.max);
  return article + noun;
}

static bool in_range(double v, const FieldInfo& f) {
  return (!f.min || v >= *f.min) && (!f.max || v <= *f.max);
}

std::optional<bool> read_bool(const ConfigNode& n, const std::string& path, ErrorList& errors) {
  if (n.is_scalar() && !n.quoted) {
    if (n.scalar == "true") return true;
    if (n.scalar == "false") return false;
  }
  errors.add(n.loc, path, "expected true or false, got " + n.describe());
  return std::nullopt;
}

std::optional<int64_t> read_int(const ConfigNode& n, const std::string& path, const FieldInfo& f, ErrorList& errors) {
  const std::string want = expectation("integer", f);
  if (n.is_scalar() && !n.quoted && !n.scalar.empty()) {
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(n.scalar.c_str(), &end, 10);
    if (*end == '\0' && errno == 0) {
      if (in_range(static_cast<double>(v), f)) return v;
      errors.add(n.loc, path, "expected " + want + ", got " + n.scalar);
      return std::nullopt;
    }
  }
  errors.add(n.loc, path, "expected " + want + ", got " + n.describe());
  return std::nullopt;
}

std::optional<double> read_float(const ConfigNode& n, const std::string& path, const FieldInfo& f, ErrorList& errors) {
  const std::string want = expectation("number", f);
  if (n.is_scalar() && !n.quoted && !n.scalar.empty()) {
    char* end = nullptr;
    double v = std::strtod(n.scalar.c_str(), &end);
    if (*end == '\0' && std::isfinite(v)) {
      if (in_range(v, f)) return v;
      errors.add(n.loc, path, "expected " + want + ", got " + n.scalar);
      return std::nullopt;
    }
  }
  errors.add(n.loc, path, "expected " + want + ", got " + n.describe());
  return std::nullopt;
}

std::optional<std::string> read_string(const ConfigNode& n, const std::string& path, const FieldInfo& f,
                                       ErrorList& errors) {
  if (!n.is_scalar()) {
    errors.add(n.loc, path, "expected a string, got " + n.describe());
    return std::nullopt;
  }
  const int64_t most = f.max_bytes.value_or(kDefaultMaxStringBytes);
  if (static_cast<int64_t>(n.scalar.size()) > most) {
    errors.add(n.loc, path, "expected a string of at most " + std::to_string(most) + " bytes, got one of " +
                                std::to_string(n.scalar.size()));
    return std::nullopt;
  }
  if (!f.choices.empty()) {
    for (const auto& c : f.choices)
      if (c == n.scalar) return n.scalar;
    std::string list;
    for (const auto& c : f.choices) list += (list.empty() ? "" : ", ") + c;
    errors.add(n.loc, path, "expected one of " + list + ", got " + n.describe() + did_you_mean(n.scalar, f.choices));
    return std::nullopt;
  }
  if (!f.pattern.empty() && !std::regex_match(n.scalar, std::regex(f.pattern))) {
    errors.add(n.loc, path, "expected " + f.pattern_doc + ", got " + n.describe());
    return std::nullopt;
  }
  return n.scalar;
}

}  // namespace svqa
