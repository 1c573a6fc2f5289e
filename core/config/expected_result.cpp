#include "core/config/expected_result.h"

namespace svqa {

std::optional<ExpectedResult> expected_result(const ConfigNode& root, ErrorList& errors) {
  const ConfigNode* node = root.find("expected");
  if (!node) return std::nullopt;
  return Schema<ExpectedResult>().parse(node, "expected", errors);
}

}  // namespace svqa
