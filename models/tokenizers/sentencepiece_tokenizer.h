#pragma once
// SentencePiece (.model files) behind the Tokenizer interface, through Debian's libsentencepiece:
// the same normaliser, BPE / unigram segmentation and byte fallback as Python `sentencepiece`.

#include <memory>
#include <string>

#include "models/tokenizers/tokenizer.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace svqa {

class SentencePieceTokenizer final : public Tokenizer {
 public:
  // Throws std::runtime_error naming `model_file` when it is missing or not a SentencePiece model.
  explicit SentencePieceTokenizer(const std::string& model_file);
  ~SentencePieceTokenizer() override;

  std::vector<int64_t> encode(const std::string& text) const override;
  std::string decode(const std::vector<int64_t>& ids) const override;
  std::optional<int64_t> token_id(const std::string& token) const override;
  int64_t vocab_size() const override;

 private:
  std::string path_;
  std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
};

}  // namespace svqa
