#include "benchmarks/annotation_reader.h"

#include <fstream>
#include <sstream>

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

nlohmann::json AnnotationReader::read_json() {
  std::ifstream in(file_);
  if (!in) {
    problems_.push_back({file_, "cannot read the annotation file", true});
    return nullptr;
  }
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    problems_.push_back({file_, std::string("not valid JSON: ") + e.what(), true});
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
  std::ifstream in(file_);
  if (!in) {
    problems_.push_back({file_, "cannot read the annotation file", true});
    return {};
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '[') {  // one JSON array
    try {
      return nlohmann::json::parse(text).get<std::vector<nlohmann::json>>();
    } catch (const nlohmann::json::exception& e) {
      problems_.push_back({file_, std::string("not valid JSON: ") + e.what(), true});
      return {};
    }
  }
  std::vector<nlohmann::json> out;  // JSON Lines
  std::istringstream lines(text);
  std::string line;
  for (size_t n = 1; std::getline(lines, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      out.push_back(nlohmann::json::parse(line));
    } catch (const nlohmann::json::exception& e) {
      problems_.push_back({file_ + ":" + std::to_string(n), std::string("not a JSON value: ") + e.what(), true});
    }
  }
  return out;
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
