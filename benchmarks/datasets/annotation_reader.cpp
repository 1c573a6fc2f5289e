#include "benchmarks/datasets/annotation_reader.h"

#include "core/io/json_text.h"

namespace svqa {

std::string describe_json(const nlohmann::json& v) {
  if (v.is_null()) return "null";
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    return nlohmann::json(s.size() > 40 ? s.substr(0, 40) + "..." : s).dump();
  }
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "the number " + v.dump();
  if (v.is_array()) return "a list";
  return "an object";
}

bool AnnotationReader::read_text(std::string& text) {
  try {
    text = read_json_file_text(file_);
  } catch (const std::runtime_error& e) {  // the message starts with the file's name
    const std::string what = e.what();
    const std::string prefix = file_ + ": ";
    problems_.push_back({file_, what.compare(0, prefix.size(), prefix) ? what : what.substr(prefix.size()), true});
    return false;
  }
  return true;
}

nlohmann::json AnnotationReader::read_json() {
  std::string text;
  if (!read_text(text)) return nullptr;
  try {
    return parse_json_text(text);
  } catch (const std::runtime_error& e) {
    problems_.push_back({file_, e.what(), true});
    return nullptr;
  }
}

nlohmann::json AnnotationReader::read_json_list(const std::string& what) {
  nlohmann::json j = read_json();
  if (j.is_null()) return nlohmann::json::array();
  if (!j.is_array()) {
    fatal("(top level)", "expected a list of " + what + ", got " + describe_json(j));
    return nlohmann::json::array();
  }
  return j;
}

std::vector<nlohmann::json> AnnotationReader::read_records() {
  std::string file_text;
  if (!read_text(file_text)) return {};
  const std::string_view text = without_utf8_bom(file_text);
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '[') {  // one JSON array
    try {
      nlohmann::json all = parse_json_text(text);
      std::vector<nlohmann::json> out;
      out.reserve(all.size());
      for (auto& record : all) out.push_back(std::move(record));
      return out;
    } catch (const std::runtime_error& e) {
      problems_.push_back({file_, e.what(), true});
      return {};
    }
  }
  std::vector<nlohmann::json> out;  // JSON Lines
  size_t n = 0;
  for (size_t begin = 0; begin < text.size();) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    const std::string_view line = text.substr(begin, end - begin);
    begin = end + 1;
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      out.push_back(parse_json_text(line));
    } catch (const std::runtime_error& e) {
      problems_.push_back({file_ + ":" + std::to_string(n), e.what(), true});
    }
  }
  return out;
}

bool AnnotationReader::short_enough(const nlohmann::json& text, const std::string& at) {
  const size_t bytes = text.get_ref<const std::string&>().size();
  if (bytes <= kMaxAnnotationTextBytes) return true;
  fatal(at, "a text of " + std::to_string(bytes) + " bytes: at most " + std::to_string(kMaxAnnotationTextBytes) +
                " (the model reads it whole, at a cost quadratic in its length)");
  return false;
}

size_t AnnotationReader::fatal_count() const {
  size_t n = 0;
  for (const auto& p : problems_) n += p.fatal;
  return n;
}

bool AnnotationReader::object(const nlohmann::json& o, const std::string& at) {
  if (o.is_object()) return true;
  fatal(at, "expected an object, got " + describe_json(o));
  return false;
}

const nlohmann::json* AnnotationReader::field(const nlohmann::json& o, const std::string& at, const char* key,
                                              bool required) {
  if (!o.is_object() || !o.contains(key)) {
    if (required) fatal(at_key(at, key), "missing");
    return nullptr;
  }
  return &o[key];
}

std::optional<std::string> AnnotationReader::text(const nlohmann::json& o, const std::string& at, const char* key,
                                                  bool required) {
  const auto* v = field(o, at, key, required);
  if (!v) return std::nullopt;
  if (!v->is_string()) {
    fatal(at_key(at, key), "expected a string, got " + describe_json(*v));
    return std::nullopt;
  }
  if (!short_enough(*v, at_key(at, key))) return std::nullopt;
  return v->get<std::string>();
}

std::optional<double> AnnotationReader::number(const nlohmann::json& o, const std::string& at, const char* key,
                                               bool required) {
  const auto* v = field(o, at, key, required);
  if (!v) return std::nullopt;
  if (!v->is_number()) {
    fatal(at_key(at, key), "expected a number, got " + describe_json(*v));
    return std::nullopt;
  }
  return v->get<double>();
}

std::optional<std::string> AnnotationReader::id(const nlohmann::json& o, const std::string& at, const char* key,
                                                bool required) {
  const auto* v = field(o, at, key, required);
  if (!v) return std::nullopt;
  if (v->is_string()) return v->get<std::string>();
  if (v->is_number_integer()) return v->dump();
  fatal(at_key(at, key), "expected a string or an integer, got " + describe_json(*v));
  return std::nullopt;
}

std::optional<std::vector<std::string>> AnnotationReader::texts(const nlohmann::json& o, const std::string& at,
                                                                const char* key, bool required) {
  const auto* v = field(o, at, key, required);
  if (!v) return std::nullopt;
  if (!v->is_array()) {
    fatal(at_key(at, key), "expected a list of strings, got " + describe_json(*v));
    return std::nullopt;
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < v->size(); ++i) {
    if (!(*v)[i].is_string()) {
      fatal(at_index(at_key(at, key), i), "expected a string, got " + describe_json((*v)[i]));
      return std::nullopt;
    }
    if (!short_enough((*v)[i], at_index(at_key(at, key), i))) return std::nullopt;
    out.push_back((*v)[i].get<std::string>());
  }
  return out;
}

std::optional<std::vector<std::pair<double, double>>> AnnotationReader::intervals(const nlohmann::json& o,
                                                                                   const std::string& at,
                                                                                   const char* key, bool required) {
  const auto* v = field(o, at, key, required);
  if (!v) return std::nullopt;
  if (!v->is_array()) {
    fatal(at_key(at, key), "expected a list of [start, end] pairs, got " + describe_json(*v));
    return std::nullopt;
  }
  std::vector<std::pair<double, double>> out;
  for (size_t i = 0; i < v->size(); ++i) {
    const auto& p = (*v)[i];
    if (!p.is_array() || p.size() != 2 || !p[0].is_number() || !p[1].is_number()) {
      fatal(at_index(at_key(at, key), i), "expected [start, end] in seconds, got " + p.dump());
      return std::nullopt;
    }
    out.emplace_back(p[0].get<double>(), p[1].get<double>());
  }
  return out;
}

const nlohmann::json* AnnotationReader::list(const nlohmann::json& o, const std::string& at, const char* key) {
  const auto* v = field(o, at, key, true);
  if (!v) return nullptr;
  if (!v->is_array()) {
    fatal(at_key(at, key), "expected a list, got " + describe_json(*v));
    return nullptr;
  }
  return v;
}

void UniqueIds::add(AnnotationReader& r, const std::string& scope, const std::string& id, const std::string& at) {
  const auto [it, added] = first_at_.emplace(std::make_pair(scope, id), at);
  if (!added)
    r.fatal(at, "question id " + nlohmann::json(id).dump() + " repeats the one at " + it->second +
                    (scope.empty() ? "" : " (stream " + nlohmann::json(scope).dump() + ")") +
                    ": ids must be unique, or the second question is never asked and is scored with the first one's answer");
}

}  // namespace svqa
