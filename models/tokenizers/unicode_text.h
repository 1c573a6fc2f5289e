#pragma once
// Text as Python and Hugging Face tokenizers see it, for the C++ tokenizers that must match them id
// for id: code points, Python's str.isspace() / str.strip() / str.lower(), NFC, and the split of a
// text on added tokens (HF's Trie.split: leftmost, longest).

#include <cstdint>
#include <string>
#include <vector>

namespace svqa {

// Code points of UTF-8 text; throws std::invalid_argument "<what>: input is not valid UTF-8".
std::vector<int32_t> code_points(const std::string& utf8, const std::string& what);
void append_utf8(std::string& out, int32_t cp);

// Python's str.isspace() (and so `\s` of `re` on str): core/io/unicode_text's python_isspace.
bool is_python_space(int32_t c);
std::string python_strip(const std::string& s, bool left, bool right);

// Python's str.lower(): utf8proc's simple mapping plus İ → i̇ and, with `final_sigma_rule`, Σ → ς at
// the end of a word. Without the rule it is Rust's char::to_lowercase applied per character (the
// `Lowercase` normalizer of HF tokenizers).
std::string python_lower(const std::string& utf8, bool final_sigma_rule = true);

// Unicode NFC (utf8proc); throws std::invalid_argument for invalid UTF-8.
std::string nfc(const std::string& utf8);

struct AddedTextToken {
  std::string content;
  int64_t id = 0;
  bool lstrip = false, rstrip = false;
  bool special = true;
  bool normalized = false;  // HF: matched in the normalised text (true) or the raw text (false)
};

struct TextChunk {
  std::string text;
  const AddedTextToken* added = nullptr;  // the added token this chunk is, or null for plain text
};

// Every occurrence of an added token (leftmost, longest) becomes its own chunk.
std::vector<TextChunk> split_on_added(const std::string& text, const std::vector<AddedTextToken>& added);

}  // namespace svqa
