#pragma once
// Text ↔ token ids, behind one interface for every backbone.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace svqa {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  virtual std::vector<int64_t> encode(const std::string& text) const = 0;
  virtual std::string decode(const std::vector<int64_t>& ids) const = 0;
  // Id of a token string (special tokens included), if it exists.
  virtual std::optional<int64_t> token_id(const std::string& token) const = 0;
  virtual int64_t vocab_size() const = 0;
};

// `path` is a Hugging Face tokenizer.json (byte-level BPE) or a SentencePiece .model file,
// or a directory holding one of them. Throws std::runtime_error naming the file and field.
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path);

}  // namespace svqa
