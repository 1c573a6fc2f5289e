#include "app/run/prediction_record.h"

#include <stdexcept>
#include <type_traits>

#include "core/io/json_lines.h"

namespace svqa {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& where, const std::string& field, const std::string& what) {
  throw std::runtime_error(where + ": " + field + ": " + what);
}

// How each type of a field list is written and read. Reading checks the type and names the field
// (its dotted path) in the message. Structs with a `fields` list are JSON objects of their fields.
template <class T, class = void>
struct Codec {
  static json write(const T& s) {
    json j = json::object();
    T::fields(s, [&](const char* key, const auto& value, Written) { j[key] = Codec<std::decay_t<decltype(value)>>::write(value); });
    return j;
  }
  static void read(const json& j, T& s, const std::string& where, const std::string& path) {
    if (!j.is_object()) fail(where, path, "expected an object");
    T::fields(s, [&](const char* key, auto& value, Written) {
      if (j.contains(key)) Codec<std::decay_t<decltype(value)>>::read(j[key], value, where, path + "." + key);
    });
  }
};

template <class T>
struct Scalar {
  static json write(const T& v) { return v; }
};

template <>
struct Codec<std::string> : Scalar<std::string> {
  static void read(const json& j, std::string& v, const std::string& where, const std::string& path) {
    if (!j.is_string()) fail(where, path, "expected a string, got " + j.dump());
    v = j.get<std::string>();
  }
};

template <>
struct Codec<int64_t> : Scalar<int64_t> {
  static void read(const json& j, int64_t& v, const std::string& where, const std::string& path) {
    if (!j.is_number_integer()) fail(where, path, "expected an integer, got " + j.dump());
    v = j.get<int64_t>();
  }
};

template <>
struct Codec<double> : Scalar<double> {
  static void read(const json& j, double& v, const std::string& where, const std::string& path) {
    if (!j.is_number()) fail(where, path, "expected a number, got " + j.dump());
    v = j.get<double>();
  }
};

template <>
struct Codec<bool> : Scalar<bool> {
  static void read(const json& j, bool& v, const std::string& where, const std::string& path) {
    if (!j.is_boolean()) fail(where, path, "expected true or false, got " + j.dump());
    v = j.get<bool>();
  }
};

template <>
struct Codec<json> : Scalar<json> {  // `extra`: an object of whatever the strategies add
  static void read(const json& j, json& v, const std::string& where, const std::string& path) {
    if (!j.is_object()) fail(where, path, "expected an object, got " + j.dump());
    v = j;
  }
};

template <class T>
struct Codec<std::optional<T>> {  // null: none
  static json write(const std::optional<T>& v) { return v ? Codec<T>::write(*v) : json(nullptr); }
  static void read(const json& j, std::optional<T>& v, const std::string& where, const std::string& path) {
    if (j.is_null()) return v.reset();
    Codec<T>::read(j, v.emplace(), where, path);
  }
};

template <class T>
struct Codec<std::vector<T>> {
  static json write(const std::vector<T>& v) {
    json j = json::array();
    for (const auto& x : v) j.push_back(Codec<T>::write(x));
    return j;
  }
  static void read(const json& j, std::vector<T>& v, const std::string& where, const std::string& path) {
    if (!j.is_array()) fail(where, path, "expected a list, got " + j.dump());
    v.clear();
    for (size_t i = 0; i < j.size(); ++i) Codec<T>::read(j[i], v.emplace_back(), where, path + "[" + std::to_string(i) + "]");
  }
};

template <>
struct Codec<std::pair<double, double>> {  // [first, second]: a span or (start, score)
  static json write(const std::pair<double, double>& v) { return {v.first, v.second}; }
  static void read(const json& j, std::pair<double, double>& v, const std::string& where, const std::string& path) {
    if (!j.is_array() || j.size() != 2 || !j[0].is_number() || !j[1].is_number())
      fail(where, path, "expected [number, number], got " + j.dump());
    v = {j[0].get<double>(), j[1].get<double>()};
  }
};

template <class K, class V>
struct Codec<std::map<K, V>> {  // a JSON object; integer keys written as text
  static std::string key_text(const K& k) {
    if constexpr (std::is_same_v<K, std::string>) return k;
    else return std::to_string(k);
  }
  static json write(const std::map<K, V>& m) {
    json j = json::object();
    for (const auto& [k, v] : m) j[key_text(k)] = Codec<V>::write(v);
    return j;
  }
  static void read(const json& j, std::map<K, V>& m, const std::string& where, const std::string& path) {
    if (!j.is_object()) fail(where, path, "expected an object, got " + j.dump());
    m.clear();
    for (const auto& [text, value] : j.items()) {
      K key{};
      if constexpr (std::is_same_v<K, std::string>) {
        key = text;
      } else {
        size_t used = 0;
        try {
          key = std::stoll(text, &used);
        } catch (const std::exception&) {
        }
        if (used == 0 || used != text.size()) fail(where, path + "." + text, "expected an integer key");
      }
      Codec<V>::read(value, m[key], where, path + "." + text);
    }
  }
};

template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};

template <class T, class = void>
struct HasEmpty : std::false_type {};
template <class T>
struct HasEmpty<T, std::void_t<decltype(std::declval<const T&>().empty())>> : std::true_type {};

// An if_set field has a value: an optional that is set, a list or object that is not empty.
template <class T>
bool is_set(const T& v) {
  if constexpr (IsOptional<T>::value) return v.has_value();
  else if constexpr (HasEmpty<T>::value) return !v.empty();
  else return true;
}

}  // namespace

json to_json(const PredictionRecord& r) {
  json j = json::object();
  PredictionRecord::fields(r, [&](const char* key, const auto& value, Written when) {
    const bool write = when == Written::always || (when == Written::error && !r.answered()) ||
                       (when == Written::error_if_set && !r.answered() && is_set(value)) ||
                       (when == Written::answer && r.answered()) ||
                       (when == Written::if_set && r.answered() && is_set(value));
    if (write) j[key] = Codec<std::decay_t<decltype(value)>>::write(value);
  });
  return j;
}

PredictionRecord record_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) fail(where, "(line)", "expected a JSON object");
  if (!j.contains("question_id")) fail(where, "question_id", "missing");
  const bool answered = !j.contains("error") || j["error"].is_null();
  if (answered && !j.contains("prediction")) fail(where, "prediction", "missing (expected it or \"error\")");
  PredictionRecord r;
  PredictionRecord::fields(r, [&](const char* key, auto& value, Written) {
    if (j.contains(key)) Codec<std::decay_t<decltype(value)>>::read(j[key], value, where, key);
  });
  if (!answered && r.error.empty()) fail(where, "error", "expected a non-empty text");
  // Records written before ttft_s was: retrieval + prefill, what ttft_s is.
  if (r.timing && !j["timing"].contains("ttft_s")) r.timing->ttft_s = r.timing->retrieve_s + r.timing->prefill_s;
  return r;
}

std::vector<PredictionRecord> prediction_records(const JsonLinesFile& file, const std::string& path) {
  std::vector<PredictionRecord> out;
  for (const auto& [n, j] : file.lines) {
    out.push_back(record_from_json(j, path + ":" + std::to_string(n)));
    out.back().line = n;
  }
  return out;
}

std::vector<PredictionRecord> read_prediction_records(const std::string& path) {
  return prediction_records(read_json_lines(path), path);
}

std::vector<Prediction> scored_predictions(const std::vector<PredictionRecord>& records) {
  std::vector<Prediction> out(records.begin(), records.end());
  for (size_t i = 0; i < records.size(); ++i)  // a proactive question's turns, as prediction_from_json reads them
    if (const auto& extra = records[i].extra; extra.contains("dialog_history")) {
      out[i].dialog_history = extra["dialog_history"];
      out[i].answered_at = extra.value("answered", json(false));
    }
  return out;
}

}  // namespace svqa
