#pragma once
// Byte-level BPE as Hugging Face `tokenizers` runs it for Qwen2 / Qwen2.5-VL:
// added tokens matched first, NFC, the pre-tokeniser regex (PCRE2, UTF + UCP), GPT-2's
// byte-to-unicode map, then merges by rank (models/tokenizers/bpe_merges.h). A model with an
// `end_of_word_suffix` (CLIP's "</w>") has it appended to each pre-token's last symbol before
// merging, as `tokenizers` does. Decoding is `tokenizers`' ByteLevel decoder: invalid UTF-8 (an
// answer cut mid-character) becomes U+FFFD.

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/tokenizers/bpe_merges.h"
#include "models/tokenizers/tokenizer.h"

namespace svqa {

class ByteLevelBpeTokenizer final : public Tokenizer {
 public:
  // Reads tokenizer.json; throws std::runtime_error naming the file and the field.
  explicit ByteLevelBpeTokenizer(const std::string& tokenizer_json);
  ~ByteLevelBpeTokenizer() override;

  std::vector<int64_t> encode(const std::string& text) const override;
  std::string decode(const std::vector<int64_t>& ids) const override;
  std::optional<int64_t> token_id(const std::string& token) const override;
  int64_t vocab_size() const override;

 private:
  struct AddedToken {
    std::string content;
    int64_t id;
  };
  void encode_ordinary(const std::string& text, std::vector<int64_t>& out) const;
  void encode_word(const std::string& word, std::vector<int64_t>& out) const;

  std::string path_;
  std::unordered_map<std::string, int64_t> vocab_;
  std::vector<std::string> id_to_token_;
  BpeMerges merges_;
  std::vector<AddedToken> added_;                     // longest first
  bool nfc_ = false;
  bool ignore_merges_ = false;
  std::string end_of_word_suffix_;
  struct Regex;
  std::unique_ptr<Regex> split_;
};

}  // namespace svqa
