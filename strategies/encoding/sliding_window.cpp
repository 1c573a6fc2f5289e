#include "strategies/encoding/sliding_window.h"

#include <algorithm>
#include <vector>

#include "core/nn/attention.h"
#include "models/backbones/deepstack.h"
#include "models/backbones/full_context.h"
#include "strategies/encoding/sink_prefill.h"

namespace svqa {
namespace {

// Room a window keeps beyond n_local before its buffer is compacted (a copy of the window every
// time that many tokens have entered).
int64_t window_capacity(int64_t n_local, int64_t first_tokens) {
  return std::max<int64_t>(first_tokens, 64) + std::min<int64_t>(n_local + n_local / 4, int64_t{1} << 16);
}

// Positions [3, n] as a positions cache stores them: [n, 1, 3].
at::Tensor as_rows(const at::Tensor& positions) { return positions.t().unsqueeze(1); }

}  // namespace

void SlidingWindow::begin(Backbone& backbone, const std::vector<int64_t>& sink_ids) {
  const int64_t layers = backbone.num_layers(), n = static_cast<int64_t>(sink_ids.size());
  const auto device = backbone.device();
  const auto& text = backbone.manifest().text;
  rope_ = text_rotary(backbone.manifest());
  sinks_ = prefill_sinks(backbone, sink_ids);
  sinks_entered_ = 0;
  next_index_ = n;
  layers_.clear();
  layers_.resize(static_cast<size_t>(layers));
  const auto options = at::TensorOptions().dtype(backbone.dtype()).device(device);
  const int64_t capacity = window_capacity(n_local_, n);
  for (auto& w : layers_) {
    w.kv = KvCache(capacity, text.num_kv_heads, text.head_dim, options);
    w.positions = KvCache(capacity, 1, 3, options.dtype(at::kLong));
  }
  if (n == 0) return;
  // Under absolute positions the window holds keys rotated once, on entry; under window positions, un-rotated.
  const auto tables = rope_.tables(sinks_.positions.to(device));
  for (int64_t l = 0; l < layers; ++l) {
    auto& w = layers_[static_cast<size_t>(l)];
    w.kv.append(rules_.relative_positions ? sinks_.keys[l] : apply_rotary(sinks_.keys[l], tables), sinks_.values[l]);
    const auto rows = as_rows(sinks_.positions.to(device));
    w.positions.append(rows, rows);
    for (int64_t i = 0; i < n; ++i) w.index.push_back(i);
  }
}

int64_t SlidingWindow::sinks_after(int64_t entered, int64_t first, int64_t n) const {
  const int64_t n_init = sinks_.size();
  if (entered == n_init) return entered;
  if (!rules_.migrate_sinks) return first + n > n_local_ ? n_init : 0;
  // The reference's get_global_hidden_and_mask: the tokens not yet moved (from `entered` to the
  // block's end) exceed n_local by some; that many more sinks, n_init at most, move.
  const int64_t past_local = first + n - entered - n_local_;
  return past_local > 0 ? entered + std::min(n_init - entered, past_local) : entered;
}

std::vector<WindowOutput> SlidingWindow::prefill(Backbone& backbone, const std::vector<WindowInput>& blocks,
                                                 const WindowHooks& hooks) {
  const int64_t layers = backbone.num_layers();
  const auto device = backbone.device();
  const auto dtype = backbone.dtype();
  const bool relative = rules_.relative_positions;

  // Per block: the stream index of its first token, the sinks in the sink segment once it has
  // entered (the same in every layer), its positions and, under window positions, the number every
  // position is shifted by: the window's oldest key, at stream index max(0, first − n_local), goes to
  // 0 (1-D positions that follow the stream; mRoPE rows shift alike), and the queries' tables.
  const size_t count = blocks.size();
  std::vector<int64_t> first(count), entered(count), shift(count, 0);
  std::vector<at::Tensor> positions(count);
  std::vector<RotaryTables> query_tables(count);
  int64_t next = next_index_, in = sinks_entered_;
  for (size_t b = 0; b < count; ++b) {
    const int64_t n = blocks[b].tokens.size(0);
    first[b] = next;
    entered[b] = in = sinks_after(in, next, n);
    positions[b] = blocks[b].positions.to(device);
    if (relative)
      shift[b] = blocks[b].positions[0][0].item<int64_t>() - (next - std::max<int64_t>(0, next - n_local_));
    query_tables[b] = rope_.tables(positions[b] - shift[b]);
    next += n;
  }
  // Sinks as in the reference code: keys at position 0 (un-rotated), queries at a fixed distance n_local - 1.
  RotaryTables sink_query;
  if (in > 0) sink_query = rope_.tables(text_positions(n_local_ - 1, 1).to(device));

  std::vector<at::Tensor> h;
  std::vector<WindowOutput> out(count);
  for (size_t b = 0; b < count; ++b) {
    h.push_back(blocks[b].tokens.to(device, dtype));
    out[b].keys.resize(static_cast<size_t>(layers));
    out[b].values.resize(static_cast<size_t>(layers));
  }
  for (int64_t l = 0; l < layers; ++l) {
    Layer& w = layers_[static_cast<size_t>(l)];
    int64_t entered_before = sinks_entered_;
    std::vector<LayerQkv> seen;
    for (size_t b = 0; b < count; ++b) {
      const int64_t n = h[b].size(0);
      if (!rules_.migrate_sinks && !rules_.sinks_stay && entered_before == 0 && entered[b] > 0) {  // they leave the window
        const int64_t drop = std::lower_bound(w.index.begin(), w.index.end(), sinks_.size()) - w.index.begin();
        w.kv.drop_front(drop);
        w.positions.drop_front(drop);
        w.index.erase(w.index.begin(), w.index.begin() + drop);
      }
      entered_before = entered[b];
      const auto qkv = backbone.layer_qkv(l, h[b]);
      const auto q = apply_rotary(qkv.q, query_tables[b]);
      // The block enters the window, then attends to it: query i (stream index first + i) sees key j
      // iff 0 <= first + i - index_j < n_local. Window keys from first + n - n_local on are seen by
      // every query; the few before (at most n) by some: only they and the block's own causal
      // triangle need a mask.
      const int64_t past = w.kv.size();
      {
        auto [k, v] = w.kv.extend(n);
        k.copy_(qkv.k);
        if (!relative) apply_rotary_(k, query_tables[b]);
        v.copy_(qkv.v);
        const auto rows = as_rows(positions[b]);
        w.positions.append(rows, rows);
      }
      at::Tensor keys = w.kv.keys();
      const at::Tensor values = w.kv.values();
      if (relative)  // the whole window re-rotated at this block's relative positions
        keys = apply_rotary(keys, rope_.tables(w.positions.keys().squeeze(1).t() - shift[b]));
      const int64_t edge = std::lower_bound(w.index.begin(), w.index.end(), first[b] + n - n_local_) - w.index.begin();
      std::vector<AttentionSegment> segments;
      if (edge < past)
        segments.push_back({q, keys.narrow(0, edge, past - edge), values.narrow(0, edge, past - edge), {},
                            AttentionMask{false, 0, 0}});
      if (edge == 0) {
        segments.push_back({q, keys.narrow(0, past, n), values.narrow(0, past, n), {}, AttentionMask{true, n_local_, 0}});
      } else {
        std::vector<int64_t> edge_index(w.index.begin(), w.index.begin() + edge);
        for (int64_t i = 0; i < n; ++i) edge_index.push_back(first[b] + i);
        const auto gap = at::arange(first[b], first[b] + n, at::kLong).unsqueeze(1) -
                         at::tensor(edge_index, at::kLong).unsqueeze(0);
        segments.push_back({q, at::cat({keys.narrow(0, 0, edge), keys.narrow(0, past, n)}),
                            at::cat({values.narrow(0, 0, edge), values.narrow(0, past, n)}),
                            ((gap >= 0) & (gap < n_local_)).to(device), {}});
      }
      if (entered[b] > 0) {
        const RotaryTables fixed{sink_query.cos.expand({n, -1}), sink_query.sin.expand({n, -1})};
        segments.push_back({apply_rotary(qkv.q, fixed), sinks_.keys[l].narrow(0, 0, entered[b]),
                            sinks_.values[l].narrow(0, 0, entered[b]), {}, {}});
      }
      h[b] = DeepStack{blocks[b].deepstack, {}}.apply(backbone.layer_out(l, h[b], attend_joint(segments)), l);
      out[b].keys[l] = qkv.k;
      out[b].values[l] = qkv.v;

      // What later tokens may attend to: the block (thinned by the hook), then the window slides.
      at::Tensor keep;
      if (hooks.window_tokens) keep = hooks.window_tokens(l, b, qkv);
      if (keep.defined()) {
        const auto kept = keep.to(at::kCPU, at::kLong).contiguous();
        const auto rows = kept.to(device);
        const auto k = w.kv.keys().narrow(0, past, n).index_select(0, rows);
        const auto v = values.narrow(0, past, n).index_select(0, rows);
        const auto p = w.positions.keys().narrow(0, past, n).index_select(0, rows);
        w.kv.truncate(past);
        w.kv.append(k, v);
        w.positions.truncate(past);
        w.positions.append(p, p);
        const int64_t* kept_index = kept.data_ptr<int64_t>();
        for (int64_t i = 0; i < kept.numel(); ++i) w.index.push_back(first[b] + kept_index[i]);
      } else {
        for (int64_t i = 0; i < n; ++i) w.index.push_back(first[b] + i);
      }
      // Keep the tokens the next block's first query can still see.
      const int64_t drop =
          std::lower_bound(w.index.begin(), w.index.end(), first[b] + n - n_local_) - w.index.begin();
      w.kv.drop_front(drop);
      w.positions.drop_front(drop);
      w.index.erase(w.index.begin(), w.index.begin() + drop);
      if (hooks.after_layer) seen.push_back(qkv);
    }
    if (hooks.after_layer) hooks.after_layer(l, seen);
  }
  sinks_entered_ = in;
  next_index_ = next;
  return out;
}

}  // namespace svqa
