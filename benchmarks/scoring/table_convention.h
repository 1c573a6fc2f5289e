#pragma once
// How the official table of a benchmark lists its categories: their order and short names, and
// whether it shows their mean (MLVU's M-Avg). Shared by the scorer and its Markdown table.

#include <string>
#include <utility>
#include <vector>

namespace svqa {

struct TableConvention {
  std::vector<std::pair<std::string, std::string>> rows;  // category, abbreviation ("" none)
  bool macro_average = false;
};

// The benchmark's table (by its registered name); none for another: categories by name, no mean.
TableConvention table_convention(const std::string& benchmark);

}  // namespace svqa
