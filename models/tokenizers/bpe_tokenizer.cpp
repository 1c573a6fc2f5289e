#include "models/tokenizers/bpe_tokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <utf8proc.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/io/unicode_text.h"
#include "core/io/json_text.h"

namespace svqa {
namespace {

using nlohmann::json;

// GPT-2's reversible map from bytes to printable code points, as UTF-8 strings.
const std::vector<std::string>& byte_to_unicode() {
  static const std::vector<std::string> table = [] {
    auto utf8 = [](int cp) {
      std::string s;
      if (cp < 0x80) {
        s += static_cast<char>(cp);
      } else {  // every code point here is < 0x800
        s += static_cast<char>(0xC0 | (cp >> 6));
        s += static_cast<char>(0x80 | (cp & 0x3F));
      }
      return s;
    };
    std::vector<std::string> t(256);
    int extra = 0;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      t[b] = utf8(printable ? b : 256 + extra++);
    }
    return t;
  }();
  return table;
}

const std::unordered_map<std::string, unsigned char>& unicode_to_byte() {
  static const std::unordered_map<std::string, unsigned char> table = [] {
    std::unordered_map<std::string, unsigned char> t;
    for (int b = 0; b < 256; ++b) t[byte_to_unicode()[b]] = static_cast<unsigned char>(b);
    return t;
  }();
  return table;
}

size_t utf8_len(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  if ((lead >> 3) == 0x1E) return 4;
  return 1;
}

std::vector<std::string> utf8_chars(const std::string& s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    size_t n = std::min(utf8_len(static_cast<unsigned char>(s[i])), s.size() - i);
    out.push_back(s.substr(i, n));
    i += n;
  }
  return out;
}

// tokenizer.json writes one step either alone or as {"type": "Sequence", <key>: [steps]}.
json steps_of(const json& j, const char* key) {
  return j.is_object() && j.value("type", "") == "Sequence" ? j.at(key) : json::array({j});
}

// The pre-tokeniser of GPT-2's ByteLevel when `use_regex` is true.
constexpr const char* kGpt2Pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Throws naming tokenizer.json and the field ("" for the file as a whole).
struct FieldFail {
  const std::string& path;
  [[noreturn]] void operator()(const std::string& field, const std::string& what) const {
    throw std::runtime_error(path + ": " + (field.empty() ? "" : field + ": ") + what);
  }
};

// model.merges, each "a b" or ["a", "b"], in rank order; both parts and their join must be in `vocab`.
void read_merges(const json& merges, const std::unordered_map<std::string, int64_t>& vocab, BpeMerges& out,
                 const FieldFail& fail) {
  size_t rank = 0;
  for (const auto& m : merges) {
    const std::string at = "model.merges[" + std::to_string(rank++) + "]";
    std::string left, right;
    if (m.is_string()) {
      const std::string pair = m.get<std::string>();
      const size_t space = pair.find(' ');  // exactly one space, as `tokenizers` reads it
      if (space == std::string::npos || pair.find(' ', space + 1) != std::string::npos)
        fail(at, "expected \"a b\", got \"" + pair + "\"");
      left = pair.substr(0, space), right = pair.substr(space + 1);
    } else if (m.is_array() && m.size() == 2) {
      left = m[0].get<std::string>(), right = m[1].get<std::string>();
    } else {
      fail(at, "expected \"a b\" or [\"a\", \"b\"]");
    }
    const auto id = [&](const std::string& token) {  // `tokenizers` refuses such a file too
      const auto it = vocab.find(token);
      if (it == vocab.end()) fail(at, "token \"" + token + "\" is not in model.vocab");
      return it->second;
    };
    const int64_t a = id(left), b = id(right), merged = id(left + right);  // in this order for the message
    out.add(a, b, merged);
  }
}

// normalizer: null, NFC, or a Sequence of those; true when NFC is among them.
bool normalizes_nfc(const json& j, const FieldFail& fail) {
  bool nfc = false;
  for (const auto& n : steps_of(j.value("normalizer", json()), "normalizers")) {
    if (n.is_null()) continue;
    if (n.value("type", "") != "NFC") fail("normalizer", "only NFC is supported, got " + n.dump());
    nfc = true;
  }
  return nfc;
}

// The pre-tokeniser's split regex: Split(Regex, Isolated) and/or ByteLevel(add_prefix_space=false), as Qwen2 uses.
std::string split_pattern(const json& j, const FieldFail& fail) {
  std::string pattern;
  for (const auto& p : steps_of(j.value("pre_tokenizer", json()), "pretokenizers")) {
    const std::string type = p.is_object() ? p.value("type", "") : "";
    if (type == "Split") {
      if (!p.at("pattern").contains("Regex")) fail("pre_tokenizer.pattern", "expected {\"Regex\": ...}");
      if (p.value("behavior", "") != "Isolated" || p.value("invert", false))
        fail("pre_tokenizer", "only Split with behavior Isolated is supported");
      pattern = p.at("pattern").at("Regex").get<std::string>();
    } else if (type == "ByteLevel") {
      if (p.value("add_prefix_space", false)) fail("pre_tokenizer.add_prefix_space", "true is not supported");
      if (p.value("use_regex", true)) pattern = kGpt2Pattern;
    } else {
      fail("pre_tokenizer", "unsupported pre-tokenizer " + p.dump());
    }
  }
  if (pattern.empty()) fail("pre_tokenizer", "no split pattern (expected Split or ByteLevel with use_regex)");
  return pattern;
}

}  // namespace

// A compiled PCRE2 pattern (UTF + UCP so \p{L}, \s follow Unicode as the Rust regex does).
struct ByteLevelBpeTokenizer::Regex {
  pcre2_code* code = nullptr;
  Regex(const std::string& pattern, const std::string& where) {
    int err = 0;
    PCRE2_SIZE offset = 0;
    code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.c_str()), pattern.size(), PCRE2_UTF | PCRE2_UCP, &err,
                         &offset, nullptr);
    if (!code) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(err, msg, sizeof msg);
      throw std::runtime_error(where + ": cannot compile pattern at offset " + std::to_string(offset) + ": " +
                               reinterpret_cast<const char*>(msg));
    }
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // optional speed-up; falls back to the interpreter
  }
  ~Regex() { pcre2_code_free(code); }

  // Splits like `tokenizers`' Split(behavior=Isolated): every match and every gap is a piece.
  std::vector<std::string> split(const std::string& s) const {
    std::vector<std::string> pieces;
    pcre2_match_data* md = pcre2_match_data_create_from_pattern(code, nullptr);
    size_t start = 0, pos = 0;
    // PCRE2 checks the whole subject is valid UTF-8 on every call: once is enough (O(n²) otherwise).
    uint32_t options = 0;
    while (pos <= s.size()) {
      int rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), pos, options, md, nullptr);
      options = PCRE2_NO_UTF_CHECK;
      if (rc < 0) break;
      const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
      if (ov[0] > start) pieces.push_back(s.substr(start, ov[0] - start));
      if (ov[1] > ov[0]) pieces.push_back(s.substr(ov[0], ov[1] - ov[0]));
      start = ov[1];
      pos = ov[1] > ov[0] ? ov[1] : ov[1] + (ov[1] < s.size() ? utf8_len(static_cast<unsigned char>(s[ov[1]])) : 1);
    }
    pcre2_match_data_free(md);
    if (start < s.size()) pieces.push_back(s.substr(start));
    return pieces;
  }
};

ByteLevelBpeTokenizer::~ByteLevelBpeTokenizer() = default;

ByteLevelBpeTokenizer::ByteLevelBpeTokenizer(const std::string& tokenizer_json) : path_(tokenizer_json) {
  const FieldFail fail{path_};
  const json j = read_json_file(path_);
  std::string pattern;  // the pre-tokeniser's split regex
  try {
    const json& model = j.at("model");
    if (model.value("type", "") != "BPE") fail("model.type", "expected \"BPE\"");
    ignore_merges_ = model.value("ignore_merges", false);
    if (model.contains("end_of_word_suffix") && model.at("end_of_word_suffix").is_string())
      end_of_word_suffix_ = model.at("end_of_word_suffix").get<std::string>();
    for (const auto& [token, id] : model.at("vocab").items()) vocab_[token] = id.get<int64_t>();
    read_merges(model.at("merges"), vocab_, merges_, fail);
    for (const auto& t : j.value("added_tokens", json::array())) {
      added_.push_back({t.at("content").get<std::string>(), t.at("id").get<int64_t>()});
      vocab_.emplace(added_.back().content, added_.back().id);
    }
    nfc_ = normalizes_nfc(j, fail);
    pattern = split_pattern(j, fail);
  } catch (const json::exception& e) {
    fail("", std::string("malformed: ") + e.what());
  }
  std::stable_sort(added_.begin(), added_.end(),
                   [](const AddedToken& a, const AddedToken& b) { return a.content.size() > b.content.size(); });
  int64_t max_id = -1;
  for (const auto& [t, id] : vocab_) max_id = std::max(max_id, id);
  id_to_token_.resize(static_cast<size_t>(max_id + 1));
  for (const auto& [t, id] : vocab_) id_to_token_[static_cast<size_t>(id)] = t;
  split_ = std::make_unique<Regex>(pattern, path_ + ": pre_tokenizer");
}

std::optional<int64_t> ByteLevelBpeTokenizer::token_id(const std::string& token) const {
  auto it = vocab_.find(token);
  return it == vocab_.end() ? std::nullopt : std::optional<int64_t>(it->second);
}

int64_t ByteLevelBpeTokenizer::vocab_size() const { return static_cast<int64_t>(id_to_token_.size()); }

void ByteLevelBpeTokenizer::encode_word(const std::string& word, std::vector<int64_t>& out) const {
  std::string mapped;
  for (unsigned char c : word) mapped += byte_to_unicode()[c];
  if (ignore_merges_) {
    if (auto id = token_id(mapped)) return out.push_back(*id);
  }
  // Characters outside the vocabulary are dropped before merging (no unk token), as `tokenizers` does;
  // the last one carries the end-of-word suffix (CLIP's "</w>") when the model has one.
  const auto chars = utf8_chars(mapped);
  std::vector<int64_t> symbols;
  for (size_t i = 0; i < chars.size(); ++i)
    if (auto id = token_id(i + 1 == chars.size() ? chars[i] + end_of_word_suffix_ : chars[i])) symbols.push_back(*id);
  for (const int64_t id : merges_.merge(std::move(symbols))) out.push_back(id);
}

void ByteLevelBpeTokenizer::encode_ordinary(const std::string& text, std::vector<int64_t>& out) const {
  if (text.empty()) return;
  std::string normalized = text;
  if (nfc_) {
    utf8proc_uint8_t* nfc = utf8proc_NFC(reinterpret_cast<const utf8proc_uint8_t*>(text.c_str()));
    if (!nfc) throw std::invalid_argument("tokenizer input is not valid UTF-8");
    normalized.assign(reinterpret_cast<char*>(nfc));
    std::free(nfc);
  }
  for (const auto& piece : split_->split(normalized)) encode_word(piece, out);
}

std::vector<int64_t> ByteLevelBpeTokenizer::encode(const std::string& text) const {
  std::vector<int64_t> out;
  size_t start = 0;
  for (size_t pos = 0; pos < text.size();) {
    const AddedToken* hit = nullptr;
    for (const auto& a : added_)  // longest first
      if (!a.content.empty() && text.compare(pos, a.content.size(), a.content) == 0) {
        hit = &a;
        break;
      }
    if (!hit) {
      ++pos;
      continue;
    }
    encode_ordinary(text.substr(start, pos - start), out);
    out.push_back(hit->id);
    pos += hit->content.size();
    start = pos;
  }
  encode_ordinary(text.substr(start), out);
  return out;
}

std::string ByteLevelBpeTokenizer::decode(const std::vector<int64_t>& ids) const {
  // `tokenizers`' ByteLevel decoder: a token whose characters all map back to bytes gives those bytes,
  // any other token its own UTF-8; the whole byte string is then read lossily (String::from_utf8_lossy).
  std::string bytes;
  for (int64_t id : ids) {
    if (id < 0 || id >= vocab_size()) throw std::out_of_range("token id " + std::to_string(id) + " is not in " + path_);
    const std::string& token = id_to_token_[static_cast<size_t>(id)];
    std::string mapped;
    for (const auto& ch : utf8_chars(token)) {
      const auto it = unicode_to_byte().find(ch);
      if (it == unicode_to_byte().end()) {
        mapped = token;
        break;
      }
      mapped += static_cast<char>(it->second);
    }
    bytes += mapped;
  }
  return utf8_lossy(bytes);
}

}  // namespace svqa
