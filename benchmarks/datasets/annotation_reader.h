#pragma once
// Reads an annotation file's records and their fields, recording every problem as a LoadProblem
// "FILE: [i].field: what was expected" instead of stopping at the first one.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/benchmark.h"

namespace svqa {

// The longest question, option or answer text accepted (real ones are under 2 KiB): prompts are
// prefilled whole, so a text's cost grows with the square of its length.
inline constexpr size_t kMaxAnnotationTextBytes = 16384;

class AnnotationReader {
 public:
  AnnotationReader(std::string file, std::vector<LoadProblem>& problems)
      : file_(std::move(file)), problems_(problems) {}

  const std::string& file() const { return file_; }
  // Every read goes through core/io/json_text.h: a regular file, a UTF-8 BOM skipped, nesting and
  // string length bounded (each line's, for JSON Lines), or one fatal problem naming the file.
  // The whole file as one JSON value; null after a fatal problem (unreadable, not JSON).
  nlohmann::json read_json();
  // The whole file, which must be a JSON array (of `what`, named in the error); empty after a fatal problem.
  nlohmann::json read_json_list(const std::string& what);
  // The whole file as a JSON list: a JSON array, or JSON Lines (one value per non-empty line).
  std::vector<nlohmann::json> read_records();

  void fatal(const std::string& at, const std::string& what) { problems_.push_back({where(at), what, true}); }
  void note(const std::string& at, const std::string& what) { problems_.push_back({where(at), what, false}); }
  size_t fatal_count() const;

  // Each records a fatal problem at "at.key" and returns nullopt when the field is missing (and
  // required) or of the wrong type; an optional missing field gives nullopt silently.
  std::optional<std::string> text(const nlohmann::json& o, const std::string& at, const char* key,
                                  bool required = true);
  std::optional<double> number(const nlohmann::json& o, const std::string& at, const char* key, bool required = true);
  // A string or a number, as text ("qid": 14 → "14").
  std::optional<std::string> id(const nlohmann::json& o, const std::string& at, const char* key, bool required = true);
  std::optional<std::vector<std::string>> texts(const nlohmann::json& o, const std::string& at, const char* key,
                                                bool required = true);
  // A list of [start, end] number pairs.
  std::optional<std::vector<std::pair<double, double>>> intervals(const nlohmann::json& o, const std::string& at,
                                                                  const char* key, bool required = true);
  // The object's list field, or nullopt after a fatal problem.
  const nlohmann::json* list(const nlohmann::json& o, const std::string& at, const char* key);
  // True if `o` is an object; records "expected an object" otherwise.
  bool object(const nlohmann::json& o, const std::string& at);

 private:
  std::string where(const std::string& at) const { return file_ + ": " + at; }
  bool read_text(std::string& text);  // the file's bytes; false after a fatal problem
  bool short_enough(const nlohmann::json& text, const std::string& at);  // else a fatal problem at `at`
  const nlohmann::json* field(const nlohmann::json& o, const std::string& at, const char* key, bool required);

  std::string file_;
  std::vector<LoadProblem>& problems_;
};

// Question ids seen so far, for the rule that an id names one question: records, resuming and scores
// are keyed by (stream, id), so a repeated id would never be asked and would be scored with the
// first one's answer. A repeat is a fatal problem naming both records.
class UniqueIds {
 public:
  // `scope`: where ids must be unique ("" for the whole file, else a stream id); `at`: the id's field.
  void add(AnnotationReader& r, const std::string& scope, const std::string& id, const std::string& at);

 private:
  std::map<std::pair<std::string, std::string>, std::string> first_at_;
};

// "[3].questions[1]" style paths.
inline std::string at_index(const std::string& at, size_t i) { return at + "[" + std::to_string(i) + "]"; }
inline std::string at_key(const std::string& at, const std::string& key) { return at.empty() ? key : at + "." + key; }

// What a JSON value is, for messages: "a number", "a list", "null", "\"text\"".
std::string describe_json(const nlohmann::json& v);

}  // namespace svqa
