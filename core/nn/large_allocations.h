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

}  // namespace svqa
