#pragma once
// fmt, from the headers LibTorch bundles, header-only: there is no libfmt to link. Include this
// instead of <fmt/format.h> so the define comes first everywhere.

#ifndef FMT_HEADER_ONLY
#define FMT_HEADER_ONLY
#endif
#include <fmt/format.h>
