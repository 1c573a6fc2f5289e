#pragma once
// One field of a CSV row (RFC 4180): quoted, its quotes doubled, where it holds a comma, quote or newline.

#include <string>

namespace svqa {

std::string csv_field(const std::string& v);

}  // namespace svqa
