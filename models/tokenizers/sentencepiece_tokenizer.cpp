#include "models/tokenizers/sentencepiece_tokenizer.h"

#include <sentencepiece_processor.h>

#include <fstream>
#include <stdexcept>

namespace svqa {
namespace {

// Status messages can span lines (protobuf parse errors); errors here are one line each.
std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

}  // namespace

SentencePieceTokenizer::SentencePieceTokenizer(const std::string& model_file)
    : path_(model_file), sp_(std::make_unique<sentencepiece::SentencePieceProcessor>()) {
  if (!std::ifstream(path_)) throw std::runtime_error(path_ + ": cannot open file");
  const auto status = sp_->Load(path_);
  if (!status.ok()) {
    // A parse failure comes back as the failed source line; say what it means instead.
    const std::string message = status.message();
    throw std::runtime_error(path_ + ": not a SentencePiece model (" +
                             (message.find("ParseFromArray") != std::string::npos ? "not a serialized ModelProto"
                                                                                   : one_line(message)) +
                             ")");
  }
}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

std::vector<int64_t> SentencePieceTokenizer::encode(const std::string& text) const {
  std::vector<int> ids;
  const auto status = sp_->Encode(text, &ids);
  if (!status.ok()) throw std::invalid_argument(path_ + ": cannot encode: " + one_line(status.ToString()));
  return {ids.begin(), ids.end()};
}

std::string SentencePieceTokenizer::decode(const std::vector<int64_t>& ids) const {
  std::vector<int> narrow;
  narrow.reserve(ids.size());
  for (int64_t id : ids) {
    if (id < 0 || id >= vocab_size()) throw std::out_of_range("token id " + std::to_string(id) + " is not in " + path_);
    narrow.push_back(static_cast<int>(id));
  }
  std::string text;
  const auto status = sp_->Decode(narrow, &text);
  if (!status.ok()) throw std::invalid_argument(path_ + ": cannot decode: " + one_line(status.ToString()));
  return text;
}

std::optional<int64_t> SentencePieceTokenizer::token_id(const std::string& token) const {
  // PieceToId answers unk_id for pieces it does not know; only "<unk>" itself maps there.
  const int id = sp_->PieceToId(token);
  if (id < 0 || (sp_->IsUnknown(id) && sp_->IdToPiece(id) != token)) return std::nullopt;
  return id;
}

int64_t SentencePieceTokenizer::vocab_size() const { return sp_->GetPieceSize(); }

}  // namespace svqa
