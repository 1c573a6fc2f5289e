#pragma once
// Typed option structs declared once, validated strictly from YAML.
//
//   struct WindowOptions {
//     int64_t n_local = 15000;
//     std::string position = "contiguous";
//     static void declare(Schema<WindowOptions>& s) {
//       s.field("n_local", &WindowOptions::n_local, "tokens kept in the local window").min(1);
//       s.field("position", &WindowOptions::position, "position policy").one_of({"contiguous", "original"});
//     }
//   };
//   WindowOptions o = parse_options<WindowOptions>(node, "encoding.options");  // throws ConfigError
//
// Rules that relate several fields are declared with `check`, run once every field has parsed
// without error, and reported at the named key (or the section when the key was left at its default):
//       s.check("retrieve_size", [](const InternalOptions& o) {
//         return o.retrieve_size % o.chunk_size ? "must be a multiple of chunk_size" : "";
//       });
//
// The default of each field is its value in a default-constructed struct. Unknown keys,
// wrong types, out-of-range values and missing required keys are each reported as
// "file:line:col: dotted.path: message".

#include <any>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "core/config/config_node.h"

namespace svqa {

// Type-erased description of one field: what `svqa list` and docs show.
struct FieldInfo {
  std::string name;
  std::string type;          // "integer", "number", "boolean", "string", "list of integers", "section"
  std::string doc;
  std::string default_yaml;  // flow-style YAML of the default ("" when required)
  bool required = false;
  std::optional<double> min, max;
  std::vector<std::string> choices;
  std::string pattern;       // ECMAScript regex a string must match in full ("" = any)
  std::string pattern_doc;   // what the pattern means, for messages ("cpu, cuda or cuda:N")
  std::optional<int64_t> max_bytes;  // strings (each string of a list): longest accepted, in bytes
  std::optional<int64_t> max_items;  // lists: most items accepted
  // A path that must exist when set (non-empty): "file", "directory" or "file or directory". Checked by
  // svqa validate / run / encode before anything loads (core/config/path_check.h), not by parsing, so a
  // config for another machine still parses here.
  std::string must_exist;
  std::vector<FieldInfo> fields;  // for nested sections
};

// A string option's bound unless its field states another (`max_bytes`): PATH_MAX, and more than any
// name, URL or prompt needs. Every string is bounded, so no option can make a run's cost unbounded.
inline constexpr int64_t kDefaultMaxStringBytes = 4096;
// A list option's bound unless its field states another (`max_items`).
inline constexpr int64_t kDefaultMaxListItems = 1024;
// Upper bounds shared by numeric options of one kind: far above any real use, far below an int64
// overflow in the products strategies form (over_retrieve · k, blocks · tokens per block).
inline constexpr double kMaxTokensOption = 1e7;  // a window or budget in tokens
inline constexpr double kMaxBlocksOption = 1e6;  // blocks or frames retrieved, kept or per segment
inline constexpr double kMaxWeightOption = 1e6;  // weights and constants of a score (RRF's k)

// Scalar conversions shared by every schema; each reports its own error and returns nullopt.
std::optional<bool> read_bool(const ConfigNode& n, const std::string& path, ErrorList& errors);
std::optional<int64_t> read_int(const ConfigNode& n, const std::string& path, const FieldInfo& f, ErrorList& errors);
std::optional<double> read_float(const ConfigNode& n, const std::string& path, const FieldInfo& f, ErrorList& errors);
std::optional<std::string> read_string(const ConfigNode& n, const std::string& path, const FieldInfo& f, ErrorList& errors);
// Reports keys of `map` not in `known`, with the closest known key suggested.
void check_known_keys(const ConfigNode& map, const std::string& path, const std::vector<std::string>& known,
                      ErrorList& errors);
std::string join_path(const std::string& path, const std::string& key);
std::string format_number(double v);
// An integer's bound as written: "10000000", not "10000000.0" (format_number's, which marks a number).
std::string format_bound(double v);

// Describes how a type is read; specialised below for the supported member types.
template <class M, class = void>
struct ValueReader;

template <>
struct ValueReader<bool> {
  static std::string type_name() { return "boolean"; }
  static std::optional<bool> read(const ConfigNode& n, const std::string& p, const FieldInfo&, ErrorList& e) {
    return read_bool(n, p, e);
  }
  static std::string yaml(bool v) { return v ? "true" : "false"; }
};

template <class M>
struct ValueReader<M, std::enable_if_t<std::is_integral_v<M> && !std::is_same_v<M, bool>>> {
  static std::string type_name() { return "integer"; }
  static std::optional<M> read(const ConfigNode& n, const std::string& p, const FieldInfo& f, ErrorList& e) {
    auto v = read_int(n, p, f, e);
    return v ? std::optional<M>(static_cast<M>(*v)) : std::nullopt;
  }
  static std::string yaml(M v) { return std::to_string(v); }
};

template <class M>
struct ValueReader<M, std::enable_if_t<std::is_floating_point_v<M>>> {
  static std::string type_name() { return "number"; }
  static std::optional<M> read(const ConfigNode& n, const std::string& p, const FieldInfo& f, ErrorList& e) {
    auto v = read_float(n, p, f, e);
    return v ? std::optional<M>(static_cast<M>(*v)) : std::nullopt;
  }
  static std::string yaml(M v) { return format_number(v); }
};

template <>
struct ValueReader<std::string> {
  static std::string type_name() { return "string"; }
  static std::optional<std::string> read(const ConfigNode& n, const std::string& p, const FieldInfo& f, ErrorList& e) {
    return read_string(n, p, f, e);
  }
  static std::string yaml(const std::string& v);
};

template <class E>
struct ValueReader<std::vector<E>> {
  static std::string type_name() { return "list of " + ValueReader<E>::type_name() + "s"; }
  static std::optional<std::vector<E>> read(const ConfigNode& n, const std::string& p, const FieldInfo& f,
                                            ErrorList& e) {
    if (!n.is_sequence()) {
      e.add(n.loc, p, "expected a " + type_name() + ", got " + n.describe());
      return std::nullopt;
    }
    const int64_t most = f.max_items.value_or(kDefaultMaxListItems);
    if (static_cast<int64_t>(n.items.size()) > most) {
      e.add(n.loc, p, "expected a " + type_name() + " of at most " + std::to_string(most) + " items, got " +
                          std::to_string(n.items.size()));
      return std::nullopt;
    }
    std::vector<E> out;
    bool ok = true;
    for (size_t i = 0; i < n.items.size(); ++i) {
      auto v = ValueReader<E>::read(n.items[i], p + "[" + std::to_string(i) + "]", f, e);
      if (v) out.push_back(*v); else ok = false;
    }
    return ok ? std::optional<std::vector<E>>(std::move(out)) : std::nullopt;
  }
  static std::string yaml(const std::vector<E>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + ValueReader<E>::yaml(v[i]);
    return s + "]";
  }
};

// Type-erased interface: what a registry keeps for any options struct.
class OptionsSchema {
 public:
  virtual ~OptionsSchema() = default;
  virtual std::vector<FieldInfo> fields() const = 0;
  // Returns the parsed struct (as std::any holding T); adds errors instead of throwing.
  virtual std::any parse_any(const ConfigNode* node, const std::string& path, ErrorList& errors) const = 0;
};

template <class T>
class Schema final : public OptionsSchema {
 public:
  // Fluent constraints on the field just declared.
  class Field {
   public:
    explicit Field(FieldInfo& info) : info_(info) {}
    Field& min(double v) { info_.min = v; return *this; }
    Field& max(double v) { info_.max = v; return *this; }
    Field& one_of(std::vector<std::string> choices) { info_.choices = std::move(choices); return *this; }
    Field& matches(std::string regex, std::string doc) {
      info_.pattern = std::move(regex);
      info_.pattern_doc = std::move(doc);
      return *this;
    }
    Field& required() { info_.required = true; info_.default_yaml.clear(); return *this; }
    Field& max_bytes(int64_t v) { info_.max_bytes = v; return *this; }
    Field& max_items(int64_t v) { info_.max_items = v; return *this; }
    Field& must_exist(std::string kind) { info_.must_exist = std::move(kind); return *this; }

   private:
    FieldInfo& info_;
  };

  Schema() { T::declare(*this); }

  template <class M>
  Field field(const std::string& name, M T::*member, const std::string& doc) {
    static const T defaults{};
    FieldInfo info;
    info.name = name;
    info.doc = doc;
    Setter set;
    if constexpr (has_declare<M>::value) {  // nested options struct
      auto nested = std::make_shared<Schema<M>>();
      info.type = "section";
      info.fields = nested->fields();
      set = [member, nested](T& obj, const ConfigNode* n, const std::string& p, const FieldInfo&, ErrorList& e) {
        obj.*member = std::any_cast<M>(nested->parse_any(n, p, e));
      };
    } else {
      info.type = ValueReader<M>::type_name();
      info.default_yaml = ValueReader<M>::yaml(defaults.*member);
      if (info.type.find("string") != std::string::npos) info.max_bytes = kDefaultMaxStringBytes;
      if (info.type.compare(0, 8, "list of ") == 0) info.max_items = kDefaultMaxListItems;
      set = [member](T& obj, const ConfigNode* n, const std::string& p, const FieldInfo& f, ErrorList& e) {
        if (auto v = ValueReader<M>::read(*n, p, f, e)) obj.*member = std::move(*v);
      };
    }
    fields_.push_back({std::move(info), std::move(set)});
    return Field(fields_.back().info);
  }

  // A cross-field rule: returns "" when `obj` is fine, else the problem, reported at `key`.
  void check(const std::string& key, std::function<std::string(const T&)> rule) {
    checks_.push_back({key, std::move(rule)});
  }

  std::vector<FieldInfo> fields() const override {
    std::vector<FieldInfo> out;
    for (const auto& f : fields_) out.push_back(f.info);
    return out;
  }

  T parse(const ConfigNode* node, const std::string& path, ErrorList& errors) const {
    const size_t errors_before = errors.size();
    T obj{};
    if (node && !node->is_null() && !node->is_map()) {
      errors.add(node->loc, path, "expected a section with keys, got " + node->describe());
      return obj;
    }
    std::vector<std::string> known;
    for (const auto& f : fields_) known.push_back(f.info.name);
    if (node) check_known_keys(*node, path, known, errors);
    for (const auto& f : fields_) {
      const ConfigNode* value = node ? node->find(f.info.name) : nullptr;
      const std::string p = join_path(path, f.info.name);
      if (value) {
        f.set(obj, value, p, f.info, errors);
      } else if (f.info.required) {
        errors.add(node ? node->loc : SourceLoc{}, p, "missing required key (" + f.info.doc + ")");
      } else if (!f.info.fields.empty()) {
        f.set(obj, nullptr, p, f.info, errors);  // nested section absent: its own defaults
      }
    }
    if (errors.size() == errors_before)  // relations between fields mean something only once each parsed
      for (const auto& c : checks_) {
        const std::string problem = c.rule(obj);
        if (problem.empty()) continue;
        const ConfigNode* at = node ? node->find(c.key) : nullptr;
        errors.add(at ? at->loc : node ? node->loc : SourceLoc{}, join_path(path, c.key), problem);
      }
    return obj;
  }

  std::any parse_any(const ConfigNode* node, const std::string& path, ErrorList& errors) const override {
    return parse(node, path, errors);
  }

 private:
  template <class M, class = void>
  struct has_declare : std::false_type {};
  template <class M>
  struct has_declare<M, std::void_t<decltype(&M::declare)>> : std::true_type {};

  using Setter = std::function<void(T&, const ConfigNode*, const std::string&, const FieldInfo&, ErrorList&)>;
  struct Entry {
    FieldInfo info;
    Setter set;
  };
  struct Check {
    std::string key;
    std::function<std::string(const T&)> rule;
  };
  std::vector<Entry> fields_;
  std::vector<Check> checks_;
};

// Parses and validates; throws ConfigError listing every problem.
template <class T>
T parse_options(const ConfigNode& node, const std::string& path) {
  ErrorList errors;
  T out = Schema<T>().parse(&node, path, errors);
  errors.throw_if_any();
  return out;
}

}  // namespace svqa
