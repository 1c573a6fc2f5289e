#include "models/tokenizers/clip_text_tokenizer.h"

#include <stdexcept>

#include "models/tokenizers/bpe_tokenizer.h"

namespace svqa {
namespace {

// Unicode White_Space, which `\s` of the Rust regex in tokenizers' Replace normalizer matches.
bool is_unicode_space(int32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

// CLIPTokenizer's normalizer: NFC, Replace(\s+, " "), Lowercase.
std::string hf_normalize(const std::string& text) {
  std::string out;
  bool in_space = false;
  for (const int32_t c : code_points(nfc(text), "CLIP text")) {
    if (is_unicode_space(c)) {
      if (!in_space) out += ' ';
      in_space = true;
      continue;
    }
    in_space = false;
    append_utf8(out, c);
  }
  return python_lower(out, /*final_sigma_rule=*/false);
}

// open_clip's _clean_lower: ftfy.fix_text (its NFC and uncurl_quotes only), strip, whitespace_clean, lower.
std::string open_clip_clean(const std::string& text) {
  std::string uncurled;
  for (const int32_t c : code_points(nfc(text), "CLIP text")) {
    if (c == 0x2BC || (c >= 0x2018 && c <= 0x201B)) uncurled += '\'';
    else if (c >= 0x201C && c <= 0x201F) uncurled += '"';
    else append_utf8(uncurled, c);
  }
  std::string out;
  bool in_space = true;  // also drops leading whitespace
  for (const int32_t c : code_points(uncurled, "CLIP text")) {
    if (is_python_space(c)) {
      in_space = true;
      continue;
    }
    if (in_space && !out.empty()) out += ' ';
    in_space = false;
    append_utf8(out, c);
  }
  return python_lower(out);
}

}  // namespace

ClipTextTokenizer::ClipTextTokenizer(const std::string& bpe_json, ClipTextSettings settings)
    : settings_(std::move(settings)), bpe_(std::make_unique<ByteLevelBpeTokenizer>(bpe_json)) {
  if (settings_.cleanup != "hf" && settings_.cleanup != "open_clip")
    throw std::runtime_error(bpe_json + ": CLIP text cleanup must be hf or open_clip, got " + settings_.cleanup);
  if (settings_.context_length < 2)
    throw std::runtime_error(bpe_json + ": CLIP context_length must be at least 2 (bos and eos)");
}

ClipTextTokenizer::~ClipTextTokenizer() = default;

// Words are separated by single spaces after either cleanup; each goes through CLIP's pattern and BPE.
void ClipTextTokenizer::encode_words(const std::string& cleaned, std::vector<int64_t>& out) const {
  for (size_t start = 0; start < cleaned.size();) {
    size_t end = cleaned.find(' ', start);
    if (end == std::string::npos) end = cleaned.size();
    if (end > start) {
      const auto ids = bpe_->encode(cleaned.substr(start, end - start));
      out.insert(out.end(), ids.begin(), ids.end());
    }
    start = end + 1;
  }
}

std::vector<int64_t> ClipTextTokenizer::encode(const std::string& text) const {
  std::vector<int64_t> tokens;
  if (settings_.cleanup == "hf") {
    std::vector<AddedTextToken> raw, normalized;
    for (const auto& a : settings_.added_tokens) (a.normalized ? normalized : raw).push_back(a);
    for (const auto& chunk : split_on_added(text, raw)) {
      if (chunk.added) {
        tokens.push_back(chunk.added->id);
        continue;
      }
      for (const auto& piece : split_on_added(hf_normalize(chunk.text), normalized))
        if (piece.added) tokens.push_back(piece.added->id);
        else encode_words(piece.text, tokens);
    }
  } else {
    for (const auto& chunk : split_on_added(open_clip_clean(text), settings_.added_tokens))
      if (chunk.added) tokens.push_back(chunk.added->id);
      else encode_words(chunk.text, tokens);
  }
  // [bos] tokens [eos], the tokens cut to context_length - 2, then padding.
  const auto room = static_cast<size_t>(settings_.context_length - 2);
  if (tokens.size() > room) tokens.resize(room);
  std::vector<int64_t> ids{settings_.bos_id};
  ids.insert(ids.end(), tokens.begin(), tokens.end());
  ids.push_back(settings_.eos_id);
  ids.resize(static_cast<size_t>(settings_.context_length), settings_.pad_id);
  return ids;
}

}  // namespace svqa
