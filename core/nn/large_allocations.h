#pragma once
// Large tensors kept out of glibc's heap, so that memory a call freed goes back to the system.

namespace svqa {

// Fixes glibc's mmap threshold at 128 KiB for the whole process (no-op elsewhere). By default glibc
// raises the threshold to the size of each large block it frees (up to 32 MiB), so after the first
// layer a model's activations land in the heap, where the small long-lived allocations between them
// fragment it: freed pages stay resident. Measured on SigLIP's 26 layers (one frame, the traced
// LLaVA-OV wrapper): 550-660 MiB above the loaded model during and after the first call, 63 MiB with
// the threshold fixed (docs/performance.md, "Real shapes"). Idempotent.
void map_large_allocations();

// Hands the heap's free pages back to the system (glibc's malloc_trim; no-op elsewhere). For a caller
// that has just freed many small tensors of sizes it will not allocate again, e.g. a KV cache
// compacted in place: their holes in the heap would otherwise stay resident and grow with the stream.
void release_free_heap();

}  // namespace svqa
