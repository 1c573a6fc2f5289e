#include "models/tokenizers/unicode_text.h"

#include <utf8proc.h>

#include "core/io/unicode_text.h"

#include <cstdlib>
#include <stdexcept>

namespace svqa {
namespace {

bool is_cased(int32_t c) {
  const auto cat = utf8proc_category(c);
  return cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LL || cat == UTF8PROC_CATEGORY_LT ||
         utf8proc_tolower(c) != c || utf8proc_toupper(c) != c;
}

// Unicode Case_Ignorable: marks, format characters, modifiers, and the word-break Mid* / quote set.
bool is_case_ignorable(int32_t c) {
  switch (utf8proc_category(c)) {
    case UTF8PROC_CATEGORY_MN: case UTF8PROC_CATEGORY_ME: case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_SK:
      return true;
    default:
      break;
  }
  for (int32_t m : {0x27, 0x2E, 0x3A, 0xB7, 0x387, 0x55F, 0x5F4, 0x2018, 0x2019, 0x2024, 0x2027, 0xFE13,
                             0xFE52, 0xFE55, 0xFF07, 0xFF0E, 0xFF1A})
    if (c == m) return true;
  return false;
}

// Python's Final_Sigma rule: Σ after a cased letter and not before one (case-ignorables skipped).
bool final_sigma(const std::vector<int32_t>& cps, size_t i) {
  size_t j = i;
  while (j > 0 && is_case_ignorable(cps[j - 1])) --j;
  if (j == 0 || !is_cased(cps[j - 1])) return false;
  size_t k = i + 1;
  while (k < cps.size() && is_case_ignorable(cps[k])) ++k;
  return k == cps.size() || !is_cased(cps[k]);
}

}  // namespace

std::vector<int32_t> code_points(const std::string& s, const std::string& what) {
  std::vector<int32_t> out;
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(s.data());
  for (utf8proc_ssize_t i = 0, n = static_cast<utf8proc_ssize_t>(s.size()); i < n;) {
    utf8proc_int32_t cp = 0;
    const utf8proc_ssize_t len = utf8proc_iterate(p + i, n - i, &cp);
    if (len < 0) throw std::invalid_argument(what + ": input is not valid UTF-8");
    out.push_back(cp);
    i += len;
  }
  return out;
}

void append_utf8(std::string& out, int32_t cp) {
  utf8proc_uint8_t buf[4];
  out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(utf8proc_encode_char(cp, buf)));
}

bool is_python_space(int32_t c) { return python_isspace(static_cast<char32_t>(c)); }

std::string python_strip(const std::string& s, bool left, bool right) {
  const auto cps = code_points(s, "text");
  size_t b = 0, e = cps.size();
  while (left && b < e && is_python_space(cps[b])) ++b;
  while (right && e > b && is_python_space(cps[e - 1])) --e;
  std::string out;
  for (size_t i = b; i < e; ++i) append_utf8(out, cps[i]);
  return out;
}

std::string python_lower(const std::string& utf8, bool final_sigma_rule) {
  const auto cps = code_points(utf8, "text");
  std::string out;
  for (size_t i = 0; i < cps.size(); ++i) {
    const int32_t c = cps[i];
    if (c == 0x130) {  // İ: the one unconditional multi-character lowercase mapping
      append_utf8(out, 0x69);
      append_utf8(out, 0x307);
    } else if (c == 0x3A3) {
      append_utf8(out, final_sigma_rule && final_sigma(cps, i) ? 0x3C2 : 0x3C3);
    } else {
      append_utf8(out, utf8proc_tolower(c));
    }
  }
  return out;
}

std::string nfc(const std::string& utf8) {
  utf8proc_uint8_t* out = utf8proc_NFC(reinterpret_cast<const utf8proc_uint8_t*>(utf8.c_str()));
  if (!out) throw std::invalid_argument("text: input is not valid UTF-8");
  std::string s(reinterpret_cast<char*>(out));
  std::free(out);
  return s;
}

std::vector<TextChunk> split_on_added(const std::string& text, const std::vector<AddedTextToken>& added) {
  std::vector<TextChunk> out;
  size_t start = 0;
  for (size_t pos = 0; pos < text.size();) {
    const AddedTextToken* hit = nullptr;
    for (const auto& a : added)
      if (text.compare(pos, a.content.size(), a.content) == 0 && (!hit || a.content.size() > hit->content.size()))
        hit = &a;
    if (!hit) {
      ++pos;
      continue;
    }
    if (pos > start) out.push_back({text.substr(start, pos - start), nullptr});
    out.push_back({hit->content, hit});
    pos += hit->content.size();
    start = pos;
  }
  if (start < text.size()) out.push_back({text.substr(start), nullptr});
  return out;
}

}  // namespace svqa
