// StreamKV retrieval on a planted bank whose blocks are stored in some layers only: the probe pass
// takes the recent blocks plus the planted ones, the second pass takes the layer-adaptive count per
// layer (fewer where the scores are peaked), and nothing absent from a layer is ever chosen there.

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <algorithm>

#include "core/memory/memory_bank.h"
#include "strategies/kit/layer_budget.h"
#include "strategies/retrieval/streamkv/streamkv_layer_adaptive.h"

namespace svqa {

TEST_CASE("recent_plus_top: all, recent + best older, or only the most recent", "[streamkv][retrieval]") {
  const auto s = at::tensor({5.0f, 1.0f, 9.0f, 2.0f, 8.0f, 0.0f, 3.0f}, at::kFloat);
  CHECK(recent_plus_top(s, 7, 2) == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6});
  CHECK(recent_plus_top(s, 4, 2) == std::vector<int64_t>{2, 4, 5, 6});  // rows 5, 6 + the best two of rows 0..4
  CHECK(recent_plus_top(s, 1, 2) == std::vector<int64_t>{6});
  CHECK(recent_plus_top(s, 3, 0) == std::vector<int64_t>{0, 2, 4});
}

TEST_CASE("StreamKV retrieval: probe, layer-adaptive counts, per-layer blocks", "[streamkv][retrieval]") {
  at::manual_seed(4);
  const int64_t layers = 3, heads = 4, kv = 2, d = 8, n = 6, blocks = 30;
  MemoryBank bank({layers, at::kCPU, -1, ""});
  LayerQuery queries[layers];
  for (int64_t l = 0; l < layers; ++l) queries[l] = {l, at::randn({5, heads, d}), at::randn({5, kv, d})};
  const auto direction = [&](int64_t l) { return queries[l].queries.mean(0).view({kv, heads / kv, d}).mean(1); };
  for (int64_t i = 0; i < blocks; ++i) {
    KvBlock b;
    b.first_frame = b.last_frame = i;
    b.positions = at::arange(i * n, (i + 1) * n, at::kLong).unsqueeze(0).expand({3, n}).contiguous();
    for (int64_t l = 0; l < layers; ++l) {
      at::Tensor k;
      if (l == 2) {
        k = 0.01 * direction(l).unsqueeze(0).expand({n, kv, d}).contiguous();  // flat: every block scores the same
      } else {
        k = 0.1 * at::randn({n, kv, d});
        if (l == 0 && i == 4) k = k + 40.0 * direction(l).unsqueeze(0);  // one dominant block: peaked
        if (l == 1 && (i == 3 || i == 10 || i == 12)) k = k + 3.0 * direction(l).unsqueeze(0);
      }
      const bool absent = l == 1 && i % 5 == 1;  // layer 1 lost some blocks to compression
      b.keys.push_back(absent ? at::Tensor() : k);
      b.values.push_back(absent ? at::Tensor() : at::randn({n, kv, d}));
      b.representatives.push_back(absent ? at::Tensor() : mean_key_representative(k));
    }
    bank.add(b);
  }

  StreamkvLayerAdaptive retrieval({6, 0.5, true, 2, 128, true});
  REQUIRE(retrieval.retrieval_passes() == 2);
  std::vector<at::Tensor> probe;
  for (int64_t l = 0; l < layers; ++l) {
    const auto chosen = retrieval.select(queries[l], bank);
    const auto& ids = bank.representative_ids(l);
    for (const int64_t id : chosen) CHECK(bank.in_layer(id, l));
    // The last two blocks the layer stores, then its best four older ones.
    CHECK(std::find(chosen.begin(), chosen.end(), ids[ids.size() - 1]) != chosen.end());
    CHECK(std::find(chosen.begin(), chosen.end(), ids[ids.size() - 2]) != chosen.end());
    CHECK(chosen.size() == 6);
    if (l == 1) {
      for (const int64_t planted : {3, 10, 12}) CHECK(std::find(chosen.begin(), chosen.end(), planted) != chosen.end());
      CHECK(std::find(chosen.begin(), chosen.end(), 11) == chosen.end());  // not stored in layer 1
    }
    probe.push_back(at::matmul(bank.representatives(l), grouped_query(queries[l].queries.mean(0), kv)));
  }
  // The second pass: the budget over the probe's scores, L × retrieve_size in all, bounds [3, 9].
  std::vector<size_t> sizes;
  for (int64_t l = 0; l < layers; ++l) {
    LayerQuery second = queries[l];
    second.pass = 1;
    const auto chosen = retrieval.select(second, bank);
    for (const int64_t id : chosen) CHECK(bank.in_layer(id, l));
    sizes.push_back(chosen.size());
  }
  const auto want = rescale_sum_match(cdf_layer_counts(probe, layers * 6), 3.0, 9.0);
  CHECK(retrieval.allocation() == want);
  for (int64_t l = 0; l < layers; ++l) CHECK(sizes[l] == static_cast<size_t>(want[l]));
  CHECK(want[0] < want[2]);  // the peaked layer takes fewer blocks than the flat one
  const auto unbounded = cdf_layer_counts(probe, layers * 6);
  CHECK(want[0] + want[1] + want[2] == unbounded[0] + unbounded[1] + unbounded[2]);  // the bounds keep the total
  // Block scores for the records: the probe's, averaged over the layers that store the block.
  const auto scores = retrieval.block_scores();
  CHECK(scores.size() == static_cast<size_t>(blocks));
}

}  // namespace svqa
