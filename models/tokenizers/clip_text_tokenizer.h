#pragma once
// CLIP's text input: byte-level BPE with CLIP's "</w>" end-of-word suffix (models/bpe_tokenizer),
// after one of two cleanups, then [bos] ids [eos] truncated and padded to context_length:
//
//   hf         transformers' CLIPTokenizer (HF CLIPModel checkpoints): added tokens matched in the raw
//              text (or, marked `normalized`, in the normalised text); NFC, runs of Unicode
//              whitespace → " ", per-character lowercase (tokenizers' Lowercase); padded with pad_id,
//              as tokenizer(text, padding="max_length", truncation=True) builds it.
//   open_clip  open_clip's SimpleTokenizer (PE-Core, OpenCLIP checkpoints): ftfy.fix_text's NFC and
//              uncurled quotes, strip, whitespace collapsed (Python's str.split), Python's
//              str.lower(); special tokens matched after that; padded with 0.
//              Not reproduced: the rest of ftfy (mojibake repair, character widths, ligatures,
//              control and terminal characters) and html.unescape; texts they would change can
//              tokenize differently (docs/retrieval.md).
//
// Both then split words with CLIP's pattern ('s|'t|...|\p{L}+|\p{N}|[^\s\p{L}\p{N}]+).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/tokenizers/unicode_text.h"

namespace svqa {

class ByteLevelBpeTokenizer;

struct ClipTextSettings {
  std::string cleanup = "hf";  // "hf" or "open_clip"
  int64_t context_length = 77;
  int64_t bos_id = 0, eos_id = 0, pad_id = 0;
  std::vector<AddedTextToken> added_tokens;  // the special tokens a text may spell out
};

class ClipTextTokenizer {
 public:
  // `bpe_json`: a tokenizer.json holding the BPE model (vocab, merges, end_of_word_suffix "</w>")
  // and CLIP's word pattern as a Split pre-tokenizer. Throws std::runtime_error naming the file.
  ClipTextTokenizer(const std::string& bpe_json, ClipTextSettings settings);
  ~ClipTextTokenizer();

  // Exactly context_length ids. Throws std::invalid_argument for text that is not valid UTF-8.
  std::vector<int64_t> encode(const std::string& text) const;
  const ClipTextSettings& settings() const { return settings_; }

 private:
  void encode_words(const std::string& cleaned, std::vector<int64_t>& out) const;

  ClipTextSettings settings_;
  std::unique_ptr<ByteLevelBpeTokenizer> bpe_;
};

}  // namespace svqa
