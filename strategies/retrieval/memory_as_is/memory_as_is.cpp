#include "strategies/retrieval/memory_as_is/memory_as_is.h"

#include <stdexcept>

namespace svqa {

std::vector<int64_t> MemoryAsIs::select(const LayerQuery&, const MemoryBank&) {
  throw std::logic_error("memory_as_is: select called, but this strategy does not retrieve (retrieves() is false)");
}

}  // namespace svqa
