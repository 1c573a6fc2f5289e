#include "core/nn/sink_window.h"

#include "core/nn/attention.h"

namespace svqa {

at::Tensor attend_sink_window(const at::Tensor& q, const RotaryTables& q_tables, const at::Tensor& k,
                              const at::Tensor& v, const SinkWindow& window, int64_t layer) {
  const auto rotated = apply_rotary(q, q_tables);
  const int64_t T = q.size(0), S = k.size(0), n_local = window.n_local;
  if (n_local <= 0 || S <= n_local) return attend(rotated, k, v, AttentionMask{}).out;
  std::vector<AttentionSegment> segments{{rotated, k, v, {}, AttentionMask{true, n_local, 0}}};
  const auto& sink_k = window.keys[static_cast<size_t>(layer)];
  const int64_t n_init = sink_k.size(0);
  // Query i (key index S − T + i) sees sink j in the sink segment iff it is n_local or more behind.
  const auto distance = at::arange(S - T, S, at::kLong).unsqueeze(1) - at::arange(n_init, at::kLong).unsqueeze(0);
  const auto visible = distance >= n_local;
  // The last query is S − 1 >= n_local behind sink 0 (S > n_local here): some query always sees a sink.
  if (n_init > 0) {
    const RotaryTables fixed{window.query_tables.cos.expand({T, -1}), window.query_tables.sin.expand({T, -1})};
    segments.push_back({apply_rotary(q, fixed), sink_k, window.values[static_cast<size_t>(layer)],
                        visible.to(k.device()), {}});
  }
  return attend_joint(segments);
}

}  // namespace svqa
