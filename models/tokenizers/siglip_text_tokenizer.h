#pragma once
// SigLIP's text input as transformers 5.23 builds it: SiglipTokenizer called with
// padding="max_length", truncation=True (what its zero-shot pipeline does and its model card asks).
//
//   "▁" + text (with "▁" → " ") → split on added tokens (</s>, <unk>) → each piece: lowercase,
//   drop ASCII punctuation, collapse whitespace, strip → SentencePiece("<unk>" + piece) minus the
//   pieces of "<unk>" → truncate to max_length - 1 → append </s> → pad with pad_id to max_length.
//
// Lowercasing is Python's str.lower() (utf8proc's simple mapping plus İ → i̇ and the final-sigma
// rule), whitespace is Python's str.isspace() set.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/tokenizers/unicode_text.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace svqa {

struct SiglipTextSettings {
  int64_t max_length = 64;
  int64_t pad_id = 1, eos_id = 1;
  std::string unk_piece = "<unk>";
  bool lowercase = true;
  bool remove_punctuation = true;
  std::vector<AddedTextToken> added_tokens;
};

class SiglipTextTokenizer {
 public:
  // Throws std::runtime_error naming `spiece_model` when it is missing or not a SentencePiece model.
  SiglipTextTokenizer(const std::string& spiece_model, SiglipTextSettings settings);
  ~SiglipTextTokenizer();

  // Exactly max_length ids. Throws std::invalid_argument for text that is not valid UTF-8.
  std::vector<int64_t> encode(const std::string& text) const;
  const SiglipTextSettings& settings() const { return settings_; }

 private:
  std::vector<std::string> pieces_of(const std::string& chunk) const;

  SiglipTextSettings settings_;
  std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
  size_t unk_pieces_ = 0;  // SentencePiece pieces of `unk_piece` alone, dropped from every encoding
};

}  // namespace svqa
