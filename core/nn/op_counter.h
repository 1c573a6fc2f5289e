#pragma once
// Host work counted per phase: ATen operator calls, and the calls that make the host wait for a
// device (a scalar read back, a result whose size depends on the data), through ATen's RecordFunction
// callbacks. A frame or a question is a few hundred operator calls per layer on any device; on a GPU
// each is a kernel launch or more and every host synchronisation stalls the queue, so these counts say
// what a GPU will wait on, measured on the CPU.
//
// Code marks its phases with OpPhaseScope (a thread-local write, nothing else, when nothing counts);
// an OpCounter, while it lives, counts every operator call on any thread under the phase of the
// thread that made it.

#include <ATen/record_function.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <string_view>

namespace svqa {

enum class OpPhase : int { other, vision, llm, bank, retrieval, gather, prefill, decode, count_ };
const char* op_phase_name(OpPhase p);

// Marks the calling thread's work as `phase` until the scope ends (scopes nest; the innermost wins).
class OpPhaseScope {
 public:
  explicit OpPhaseScope(OpPhase phase);
  ~OpPhaseScope();
  OpPhaseScope(const OpPhaseScope&) = delete;
  OpPhaseScope& operator=(const OpPhaseScope&) = delete;

 private:
  OpPhase previous_;
};

struct OpCounts {
  int64_t ops = 0;    // ATen operator calls, nested ones included (a matmul and the mm it calls: 2)
  int64_t syncs = 0;  // calls that wait for the device on a GPU: _local_scalar_dense (item()), nonzero, ...
  OpCounts& operator+=(const OpCounts& o) {
    ops += o.ops, syncs += o.syncs;
    return *this;
  }
};

// Whether an operator (ATen's name, "aten::nonzero") makes the host wait for the device's result:
// a scalar read back or an output whose size depends on the data. On the CPU nothing waits, but the
// same calls in the same places would on a GPU. (A copy from a GPU to the host waits too: counted by
// the CUDA path, which sees the devices of a copy's arguments.)
bool is_synchronising_op(std::string_view name);

// Counts while it lives (one at a time per process). Cheap: an atomic increment per operator call.
class OpCounter {
 public:
  // `copies_to_host`: also count copies from a non-CPU device to the CPU as synchronisations (reads
  // every copy's arguments: for a run on a GPU).
  explicit OpCounter(bool copies_to_host = false);
  ~OpCounter();
  OpCounter(const OpCounter&) = delete;
  OpCounter& operator=(const OpCounter&) = delete;

  OpCounts counts(OpPhase phase) const;
  OpCounts total() const;
  void reset();

 private:
  at::CallbackHandle handle_ = 0;
};

}  // namespace svqa
