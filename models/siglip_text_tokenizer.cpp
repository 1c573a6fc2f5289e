#include "models/siglip_text_tokenizer.h"

#include <sentencepiece_processor.h>
#include <utf8proc.h>

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include "core/io/unicode_text.h"

namespace svqa {
namespace {

constexpr const char* kUnderline = "\xE2\x96\x81";  // "▁", SentencePiece's word-boundary mark

std::vector<utf8proc_int32_t> code_points(const std::string& s) {
  std::vector<utf8proc_int32_t> out;
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(s.data());
  for (utf8proc_ssize_t i = 0, n = static_cast<utf8proc_ssize_t>(s.size()); i < n;) {
    utf8proc_int32_t cp = 0;
    const utf8proc_ssize_t len = utf8proc_iterate(p + i, n - i, &cp);
    if (len < 0) throw std::invalid_argument("SigLIP text: input is not valid UTF-8");
    out.push_back(cp);
    i += len;
  }
  return out;
}

void append_utf8(std::string& out, utf8proc_int32_t cp) {
  utf8proc_uint8_t buf[4];
  out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(utf8proc_encode_char(cp, buf)));
}

// Python's str.isspace() (and so `\s` of `re` on str).
bool is_space(utf8proc_int32_t c) { return python_isspace(static_cast<char32_t>(c)); }

bool is_cased(utf8proc_int32_t c) {
  const auto cat = utf8proc_category(c);
  return cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LL || cat == UTF8PROC_CATEGORY_LT ||
         utf8proc_tolower(c) != c || utf8proc_toupper(c) != c;
}

// Unicode Case_Ignorable: marks, format characters, modifiers, and the word-break Mid* / quote set.
bool is_case_ignorable(utf8proc_int32_t c) {
  switch (utf8proc_category(c)) {
    case UTF8PROC_CATEGORY_MN: case UTF8PROC_CATEGORY_ME: case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_SK:
      return true;
    default:
      break;
  }
  for (utf8proc_int32_t m : {0x27, 0x2E, 0x3A, 0xB7, 0x387, 0x55F, 0x5F4, 0x2018, 0x2019, 0x2024, 0x2027, 0xFE13,
                             0xFE52, 0xFE55, 0xFF07, 0xFF0E, 0xFF1A})
    if (c == m) return true;
  return false;
}

// Python's Final_Sigma rule: Σ after a cased letter and not before one (case-ignorables skipped).
bool final_sigma(const std::vector<utf8proc_int32_t>& cps, size_t i) {
  size_t j = i;
  while (j > 0 && is_case_ignorable(cps[j - 1])) --j;
  if (j == 0 || !is_cased(cps[j - 1])) return false;
  size_t k = i + 1;
  while (k < cps.size() && is_case_ignorable(cps[k])) ++k;
  return k == cps.size() || !is_cased(cps[k]);
}

std::string python_strip(const std::string& s, bool left, bool right) {
  const auto cps = code_points(s);
  size_t b = 0, e = cps.size();
  while (left && b < e && is_space(cps[b])) ++b;
  while (right && e > b && is_space(cps[e - 1])) --e;
  std::string out;
  for (size_t i = b; i < e; ++i) append_utf8(out, cps[i]);
  return out;
}

// SiglipTokenizer.canonicalize_text: lower, remove string.punctuation, `\s+` → " ", strip.
std::string canonicalize(const std::string& text, const SiglipTextSettings& s) {
  static const std::string kPunctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
  const std::string lowered = s.lowercase ? python_lower(text) : text;
  std::string out;
  bool in_space = false;
  for (utf8proc_int32_t c : code_points(lowered)) {
    if (s.remove_punctuation && c < 0x80 && kPunctuation.find(static_cast<char>(c)) != std::string::npos) continue;
    if (is_space(c)) {
      if (!in_space) out += ' ';
      in_space = true;
      continue;
    }
    in_space = false;
    append_utf8(out, c);
  }
  return python_strip(out, true, true);
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
    s.replace(pos, from.size(), to);
  return s;
}

struct Chunk {
  std::string text;
  const AddedTextToken* added = nullptr;
};

// HF's Trie.split: every occurrence of an added token (leftmost, longest) becomes its own chunk.
std::vector<Chunk> split_on_added(const std::string& text, const std::vector<AddedTextToken>& added) {
  std::vector<Chunk> out;
  size_t start = 0;
  for (size_t pos = 0; pos < text.size();) {
    const AddedTextToken* hit = nullptr;
    for (const auto& a : added)
      if (text.compare(pos, a.content.size(), a.content) == 0 && (!hit || a.content.size() > hit->content.size()))
        hit = &a;
    if (!hit) {
      ++pos;
      continue;
    }
    if (pos > start) out.push_back({text.substr(start, pos - start), nullptr});
    out.push_back({hit->content, hit});
    pos += hit->content.size();
    start = pos;
  }
  if (start < text.size()) out.push_back({text.substr(start), nullptr});
  return out;
}

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

}  // namespace

std::string python_lower(const std::string& utf8) {
  const auto cps = code_points(utf8);
  std::string out;
  for (size_t i = 0; i < cps.size(); ++i) {
    const utf8proc_int32_t c = cps[i];
    if (c == 0x130) {  // İ: the one unconditional multi-character lowercase mapping
      append_utf8(out, 0x69);
      append_utf8(out, 0x307);
    } else if (c == 0x3A3) {
      append_utf8(out, final_sigma(cps, i) ? 0x3C2 : 0x3C3);
    } else {
      append_utf8(out, utf8proc_tolower(c));
    }
  }
  return out;
}

SiglipTextTokenizer::SiglipTextTokenizer(const std::string& spiece_model, SiglipTextSettings settings)
    : settings_(std::move(settings)), sp_(std::make_unique<sentencepiece::SentencePieceProcessor>()) {
  if (!std::ifstream(spiece_model)) throw std::runtime_error(spiece_model + ": cannot open file");
  const auto status = sp_->Load(spiece_model);
  if (!status.ok())
    throw std::runtime_error(spiece_model + ": not a SentencePiece model (" + one_line(status.message()) + ")");
  std::vector<std::string> pieces;
  sp_->Encode(settings_.unk_piece, &pieces);
  unk_pieces_ = pieces.size();
}

SiglipTextTokenizer::~SiglipTextTokenizer() = default;

// SiglipTokenizer._tokenize for one chunk that is not an added token: its pieces.
std::vector<std::string> SiglipTextTokenizer::pieces_of(const std::string& chunk) const {
  std::vector<std::string> pieces;
  const auto status = sp_->Encode(settings_.unk_piece + canonicalize(chunk, settings_), &pieces);
  if (!status.ok()) throw std::invalid_argument("SigLIP text: cannot encode: " + one_line(status.ToString()));
  const size_t drop = pieces.size() >= unk_pieces_ ? unk_pieces_ : 0;  // as HF: only when there are that many
  pieces.erase(pieces.begin(), pieces.begin() + static_cast<std::ptrdiff_t>(drop));
  return pieces;
}

std::vector<int64_t> SiglipTextTokenizer::encode(const std::string& text) const {
  auto chunks = split_on_added(kUnderline + replace_all(text, kUnderline, " "), settings_.added_tokens);
  for (size_t i = 0; i < chunks.size(); ++i) {  // added tokens' lstrip / rstrip, in HF's order
    if (!chunks[i].added) continue;
    if (chunks[i].added->rstrip && i + 1 < chunks.size() && !chunks[i + 1].text.empty())
      chunks[i + 1].text = python_strip(chunks[i + 1].text, true, false);
    if (chunks[i].added->lstrip && i > 0 && !chunks[i - 1].text.empty())
      chunks[i - 1].text = python_strip(chunks[i - 1].text, false, true);
  }
  struct Token {
    std::string piece;
    const AddedTextToken* added;
  };
  std::vector<Token> tokens;
  for (const auto& c : chunks) {
    if (c.text.empty()) continue;
    if (c.added) tokens.push_back({c.text, c.added});
    else
      for (auto& p : pieces_of(c.text)) tokens.push_back({std::move(p), nullptr});
  }
  // SiglipTokenizer.tokenize: a lone "▁" before a special token is dropped.
  if (tokens.size() > 1 && tokens[0].piece == kUnderline && tokens[1].added && tokens[1].added->special)
    tokens.erase(tokens.begin());

  std::vector<int64_t> ids;  // convert_tokens_to_ids: added tokens by content first, then the vocabulary
  for (const auto& t : tokens) {
    const auto added = std::find_if(settings_.added_tokens.begin(), settings_.added_tokens.end(),
                                    [&](const AddedTextToken& a) { return a.content == t.piece; });
    ids.push_back(added != settings_.added_tokens.end() ? added->id : sp_->PieceToId(t.piece));
  }
  // truncation=True: room for the one special token, then </s> unless already last, then padding.
  const auto max_length = static_cast<size_t>(settings_.max_length);
  if (ids.size() + 1 > max_length) ids.resize(max_length - 1);
  if (ids.empty() || ids.back() != settings_.eos_id) ids.push_back(settings_.eos_id);
  ids.resize(std::max(ids.size(), max_length), settings_.pad_id);
  return ids;
}

}  // namespace svqa
