#include "models/tokenizers/siglip_text_tokenizer.h"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include "models/tokenizers/unicode_text.h"

namespace svqa {
namespace {

constexpr const char* kUnderline = "\xE2\x96\x81";  // "▁", SentencePiece's word-boundary mark

// SiglipTokenizer.canonicalize_text: lower, remove string.punctuation, `\s+` → " ", strip.
std::string canonicalize(const std::string& text, const SiglipTextSettings& s) {
  static const std::string kPunctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
  const std::string lowered = s.lowercase ? python_lower(text) : text;
  std::string out;
  bool in_space = false;
  for (int32_t c : code_points(lowered, "SigLIP text")) {
    if (s.remove_punctuation && c < 0x80 && kPunctuation.find(static_cast<char>(c)) != std::string::npos) continue;
    if (is_python_space(c)) {
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

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

}  // namespace

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
