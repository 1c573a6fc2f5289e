#include "models/tokenizers/tokenizer.h"

#include <filesystem>
#include <stdexcept>

#include "models/tokenizers/bpe_tokenizer.h"
#include "models/tokenizers/sentencepiece_tokenizer.h"

namespace svqa {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

// tokenizer.json wins over tokenizer.model in a directory: HF checkpoints that ship both
// (converted SentencePiece models) define their tokenizer by the .json.
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::string file = path;
  if (fs::is_directory(path, ec)) {
    if (fs::exists(fs::path(path) / "tokenizer.json", ec)) file = (fs::path(path) / "tokenizer.json").string();
    else if (fs::exists(fs::path(path) / "tokenizer.model", ec)) file = (fs::path(path) / "tokenizer.model").string();
  }
  if (ends_with(file, ".json")) return std::make_unique<ByteLevelBpeTokenizer>(file);
  if (ends_with(file, ".model")) return std::make_unique<SentencePieceTokenizer>(file);
  throw std::runtime_error(path +
                           ": no tokenizer.json or tokenizer.model (expected a tokenizer.json, a SentencePiece "
                           ".model file, or a directory holding one)");
}

}  // namespace svqa
