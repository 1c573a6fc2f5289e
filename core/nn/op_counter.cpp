#include "core/nn/op_counter.h"

#include <stdexcept>
#include <string_view>
#include <unordered_set>

namespace svqa {
namespace {

constexpr size_t kPhases = static_cast<size_t>(OpPhase::count_);
thread_local OpPhase current_phase = OpPhase::other;

struct Tally {
  std::array<std::atomic<int64_t>, kPhases> ops{}, syncs{};
  std::atomic<bool> active{false};
  bool copies_to_host = false;
};
Tally& tally() {
  static Tally t;
  return t;
}

// copy_(dst, src) from a device to the host: the host waits for the device's queue.
bool copies_device_to_host(const at::RecordFunction& fn) {
  const auto inputs = fn.inputs();
  if (inputs.size() < 2 || !inputs[0].isTensor() || !inputs[1].isTensor()) return false;
  return inputs[0].toTensor().device().is_cpu() && !inputs[1].toTensor().device().is_cpu();
}

std::unique_ptr<at::ObserverContext> on_call(const at::RecordFunction& fn) {
  Tally& t = tally();
  const auto phase = static_cast<size_t>(current_phase);
  t.ops[phase].fetch_add(1, std::memory_order_relaxed);
  const std::string_view name = fn.name();
  if (is_synchronising_op(name) || (t.copies_to_host && name == "aten::copy_" && copies_device_to_host(fn)))
    t.syncs[phase].fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

}  // namespace

const char* op_phase_name(OpPhase p) {
  static const char* names[] = {"other", "vision", "llm", "bank", "retrieval", "gather", "prefill", "decode"};
  return names[static_cast<size_t>(p)];
}

OpPhaseScope::OpPhaseScope(OpPhase phase) : previous_(current_phase) { current_phase = phase; }
OpPhaseScope::~OpPhaseScope() { current_phase = previous_; }

bool is_synchronising_op(std::string_view name) {
  static const std::unordered_set<std::string_view> ops{
      "aten::_local_scalar_dense", "aten::nonzero",        "aten::masked_select", "aten::_unique2",
      "aten::unique_consecutive",  "aten::unique_dim",     "aten::equal",         "aten::repeat_interleave",
      "aten::_nested_tensor_from_mask_left_aligned",       "aten::bincount"};
  return ops.count(name) > 0;
}

OpCounter::OpCounter(bool copies_to_host) {
  Tally& t = tally();
  if (t.active.exchange(true)) throw std::logic_error("op counter: one at a time per process");
  t.copies_to_host = copies_to_host;
  reset();
  handle_ = at::addGlobalCallback(at::RecordFunctionCallback(on_call)
                                      .needsInputs(copies_to_host)
                                      .scopes({at::RecordScope::FUNCTION}));
}

OpCounter::~OpCounter() {
  at::removeCallback(handle_);
  tally().active = false;
}

OpCounts OpCounter::counts(OpPhase phase) const {
  const auto p = static_cast<size_t>(phase);
  return {tally().ops[p].load(), tally().syncs[p].load()};
}

OpCounts OpCounter::total() const {
  OpCounts sum;
  for (size_t p = 0; p < kPhases; ++p) sum += counts(static_cast<OpPhase>(p));
  return sum;
}

void OpCounter::reset() {
  for (size_t p = 0; p < kPhases; ++p) tally().ops[p] = 0, tally().syncs[p] = 0;
}

}  // namespace svqa
