#pragma once
// fmt, from the headers LibTorch bundles, header-only: there is no libfmt to link. Include this
// instead of <fmt/format.h> so the define comes first everywhere.

#ifndef FMT_HEADER_ONLY
#define FMT_HEADER_ONLY
#endif
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

namespace svqa {

// `v` rounded to `digits` significant digits, as "{:.Ng}" writes it. Subnormal values survive
// (std::stod throws std::out_of_range on them: an RRF score w/(k + rank) with a huge k is one);
// non-finite values come back as they went in.
inline double round_significant(double v, int digits) {
  if (!std::isfinite(v)) return v;
  const double rounded = std::strtod(fmt::format("{:.{}g}", v, digits).c_str(), nullptr);
  return std::isfinite(rounded) ? rounded : v;  // DBL_MAX rounds up past the largest double
}

}  // namespace svqa
