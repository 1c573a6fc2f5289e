#pragma once
// stream.context_window_s (StreamingBench's --context_time): a question at t may use only the part of
// the memory inside [t - w, t]. The stream's bank keeps everything; the question is answered from a
// bank of copies of the blocks that start at or after t - w, so retrieval chooses among those alone
// and the context holds nothing older. Copying is bounded by the window, and nothing is re-encoded.

#include <memory>

#include "core/memory/memory_bank.h"

namespace svqa {

// Where a question at `time` may start looking under a window of `window_s` seconds (0: the whole
// past, so 0); StreamingBench's clip start max(0, t - w).
double window_start(double time, double window_s);

// A bank (same layers, never spilling, representatives on `options.device`) holding a copy of each
// block of `bank` whose start_time is at or after `start`, in id order. Ids are the new bank's own.
std::unique_ptr<MemoryBank> blocks_from(const MemoryBank& bank, double start, const MemoryBankOptions& options);

}  // namespace svqa
