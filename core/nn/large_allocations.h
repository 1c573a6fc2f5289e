#pragma once
// Where a call's freed memory goes. svqa's programs link jemalloc as their malloc (SVQA_JEMALLOC,
// core/nn/CMakeLists.txt): a frame's activations reuse the extents the last frame freed, small
// long-lived allocations live apart from them, and freed pages go back to the system after a delay.
// Built without it, glibc's malloc needs the fixed mmap threshold below, at the price of a page
// fault per 4 KiB of every large temporary (docs/performance.md, "Round 3's CPU regression").

#include <cstdint>

namespace svqa {

// glibc only: fixes the mmap threshold at 128 KiB for the whole process. By default glibc raises the
// threshold to the size of each large block it frees (up to 32 MiB), so after the first layer a
// model's activations land in the heap, where the small long-lived allocations between them
// fragment it: freed pages stay resident. Measured on SigLIP's 26 layers (one frame, the traced
// LLaVA-OV wrapper): 550-660 MiB above the loaded model during and after the first call, 63 MiB with
// the threshold fixed (docs/performance.md, "Real shapes"). A no-op under jemalloc. Idempotent.
void map_large_allocations();

// Hands the allocator's free pages back to the system now (jemalloc: purge every arena; glibc:
// malloc_trim). For a caller that has just freed much it will not allocate again in that shape,
// e.g. a KV cache compacted in place, or a measurement that must start from what is live.
void release_free_heap();

// Whether this build's malloc is jemalloc.
bool jemalloc_linked();

// What the process's malloc hands out and holds: bytes live in allocations, and bytes it holds
// from the system beyond the live mapped chunks (jemalloc: stats.allocated and stats.resident;
// glibc: mallinfo2's in-use + mmapped, and its heap). RSS growing while `live` stays flat is the
// allocator keeping freed memory, not a leak.
struct MallocUsage {
  int64_t live_bytes = 0, held_bytes = 0;
};
MallocUsage malloc_usage();

}  // namespace svqa
