#include "core/nn/large_allocations.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace svqa {

void map_large_allocations() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
}

void release_free_heap() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace svqa
