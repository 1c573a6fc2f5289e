#pragma once
// UTF-8 text as Python's `str` sees it, for the places that must agree with Python code exactly:
// official scoring scripts (str.strip(), re's \w and \b) and Hugging Face decoding (invalid
// bytes become U+FFFD, as bytes.decode("utf-8", "replace") and Rust's from_utf8_lossy).

#include <string>

namespace svqa {

// `bytes` with every maximal invalid UTF-8 subsequence replaced by one U+FFFD (the Unicode
// "substitution of maximal subparts" practice that Python and Rust follow): valid input is unchanged.
std::string utf8_lossy(const std::string& bytes);

// The longest prefix of `s` of at most `max_bytes` bytes that does not cut a UTF-8 sequence (for
// table columns: a byte cut leaves invalid UTF-8 that a reader decoding the output refuses).
std::string utf8_prefix(const std::string& s, size_t max_bytes);

// Decodes the code point at s[i] and advances i past it; an invalid sequence reads as U+FFFD.
char32_t next_code_point(const std::string& s, size_t& i);

// Python's str.isspace(): what str.strip() removes and `\s` matches.
bool python_isspace(char32_t c);
// Python 3's `\w` on str: c.isalnum() or '_' (letters L*, numbers Nd, Nl, No).
bool python_is_word(char32_t c);
// Python 3's `\d` on str: c is a decimal digit (category Nd, e.g. '٣' as well as '3').
bool python_is_decimal(char32_t c);
// Python's s.strip() with no argument (Unicode whitespace on both ends).
std::string python_strip(const std::string& s);

}  // namespace svqa
