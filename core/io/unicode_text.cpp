#include "core/io/unicode_text.h"

#include <utf8proc.h>

namespace svqa {
namespace {

constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

bool continuation(unsigned char b, unsigned char lo = 0x80, unsigned char hi = 0xBF) { return b >= lo && b <= hi; }

// Length of the valid sequence at s[i], or 0 with `bad` set to the length of its maximal invalid subpart.
size_t valid_length(const std::string& s, size_t i, size_t& bad) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char lead = b(0);
  if (lead < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range allowed for the second byte
  if (lead >= 0xC2 && lead <= 0xDF) n = 2;
  else if (lead >= 0xE0 && lead <= 0xEF) n = 3, lo = lead == 0xE0 ? 0xA0 : 0x80, hi = lead == 0xED ? 0x9F : 0xBF;
  else if (lead >= 0xF0 && lead <= 0xF4) n = 4, lo = lead == 0xF0 ? 0x90 : 0x80, hi = lead == 0xF4 ? 0x8F : 0xBF;
  if (n == 0) {  // 80–C1, F5–FF never start a sequence
    bad = 1;
    return 0;
  }
  for (size_t k = 1; k < n; ++k) {
    if (i + k >= s.size() || !continuation(b(k), k == 1 ? lo : 0x80, k == 1 ? hi : 0xBF)) {
      bad = k;
      return 0;
    }
  }
  return n;
}

}  // namespace

std::string utf8_lossy(const std::string& bytes) {
  std::string out;
  size_t i = 0, bad = 0;
  while (i < bytes.size()) {
    const size_t start = i;
    while (i < bytes.size()) {  // a run of valid sequences is copied at once
      const size_t n = valid_length(bytes, i, bad);
      if (n == 0) break;
      i += n;
    }
    out.append(bytes, start, i - start);
    if (i < bytes.size()) {
      out += kReplacement;
      i += bad;
    }
  }
  return out;
}

char32_t next_code_point(const std::string& s, size_t& i) {
  size_t bad = 0;
  const size_t n = valid_length(s, i, bad);
  if (n == 0) {
    i += bad;
    return 0xFFFD;
  }
  const auto lead = static_cast<unsigned char>(s[i]);
  char32_t cp = n == 1 ? lead : lead & (0xFF >> (n + 1));
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  i += n;
  return cp;
}

bool python_isspace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

bool python_is_word(char32_t c) {
  if (c < 0x80) return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT: case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO: case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO:
      return true;
    default:
      return false;
  }
}

bool python_is_decimal(char32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  return utf8proc_category(static_cast<utf8proc_int32_t>(c)) == UTF8PROC_CATEGORY_ND;
}

std::string python_strip(const std::string& s) {
  size_t begin = 0, end = s.size();
  for (size_t i = 0; i < s.size();) {  // skip leading whitespace
    size_t next = i;
    if (!python_isspace(next_code_point(s, next))) break;
    begin = i = next;
  }
  if (begin == s.size()) return "";
  for (size_t i = begin; i < s.size();) {  // end: just past the last character that is not whitespace
    if (!python_isspace(next_code_point(s, i))) end = i;
  }
  return s.substr(begin, end - begin);
}

std::string utf8_prefix(const std::string& s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  size_t n = max_bytes;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;  // s[n] continues a sequence
  return s.substr(0, n);
}

}  // namespace svqa
