// StreamingTOM against a Python transcription of its reference code's steps
// (tests/python/streamingtom_reference.py), on planted inputs whose answer is known: CTR keeps
// exactly what its similarity rule and budgets keep (planted static tokens found static), the
// bank's 4-bit groups decode as OQM's do and within the quantisation bound, and retrieval by
// cosine with the question's mean query picks the planted frame's group.

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/memory/kv_codec.h"
#include "models/video/npy.h"
#include "strategies/encoding/streamingtom/ctr_reducer.h"
#include "strategies/retrieval/internal/internal.h"
#include "tests/strategy_fixtures.h"

namespace svqa {
namespace {

constexpr int64_t kTokens = 196, kDim = 8, kFrames = 4;
constexpr int64_t kStatic[kFrames] = {0, 150, 98, 30};  // planted static tokens per frame (the first frame: none)

// Frame 0: tokens around five cluster centres (so DPC has clusters to find); frame f: its first
// kStatic[f] tokens the previous frame's plus a little noise (cosine ≈ 1: static), the rest the
// previous frame's negated (cosine ≈ −1: dynamic).
at::Tensor planted_frames() {
  const at::Tensor centres = at::randn({5, kDim}) * 2;
  std::vector<at::Tensor> frames{centres.index_select(0, at::randint(0, 5, {kTokens}, at::kLong)) +
                                 0.3 * at::randn({kTokens, kDim})};
  for (int64_t f = 1; f < kFrames; ++f) {
    at::Tensor next = -frames.back() + 0.05 * at::randn({kTokens, kDim});
    next.narrow(0, 0, kStatic[f]).copy_(frames.back().narrow(0, 0, kStatic[f]) + 0.01 * at::randn({kStatic[f], kDim}));
    frames.push_back(next);
  }
  return at::stack(frames);
}

at::Tensor group_keys(const at::Tensor& keys) { return keys.flatten(1).mean(0, true); }  // [1, kv·d]

}  // namespace

TEST_CASE("streamingtom: CTR, OQM's 4-bit groups and group retrieval equal the reference's steps", "[streamingtom]") {
  at::manual_seed(21);
  const std::string dir = test::temp_dir("streamingtom");
  std::filesystem::create_directories(dir);
  const CtrSettings ctr{50, 0.9, 7, 0.6};
  const uint64_t seed = 5;

  // CTR: svqa's reducer over the frames in order; the reference fed two frames at a time (its state
  // carries the last frame across batches, as svqa's reducer carries it across units).
  const at::Tensor frames = planted_frames();
  std::vector<at::Tensor> importance;
  std::vector<ReducedTokens> ours;
  CtrReducer reducer(ctr, seed);
  at::Tensor previous;
  for (int64_t f = 0; f < kFrames; ++f) {
    VisualUnit unit;
    unit.tokens = frames[f];
    importance.push_back(ctr_distinctiveness(frames[f]));
    const at::Tensor mask = ctr_static_mask(frames[f], previous, ctr.similarity_threshold);
    CHECK(mask.sum().item<int64_t>() == kStatic[f]);  // the planted static tokens, and only they
    CHECK(mask.narrow(0, 0, kStatic[f]).all().item<bool>());
    previous = frames[f];
    ours.push_back(reducer.reduce(unit));
    CHECK(ours.back().rows.numel() == 50);
  }
  write_npy(dir + "/frames.npy", frames);
  write_npy(dir + "/importance.npy", at::stack(importance));

  // OQM: a frame pair's keys [100, 2, 8] in groups of 50 at 4 bits.
  const KvCodec codec({"int4", 50});
  const at::Tensor kv = at::randn({100, 2, 8}) * at::linspace(0.5, 3.0, 8);
  write_npy(dir + "/kv.npy", kv);

  // Retrieval: 30 frames of 50 tokens in an int4 bank, frame 17 planted along the question.
  const test::Shape s{2, 4, 2, 8};
  const auto queries = test::random_queries(s);
  MemoryBankOptions options = test::cpu_bank(s.layers);
  options.codec = {"int4", 50};
  MemoryBank bank(options);
  std::vector<std::vector<at::Tensor>> keys_per_layer(static_cast<size_t>(s.layers));
  for (int64_t i = 0; i < 30; ++i) {
    KvBlock b = test::random_block(s.layers, 50, s.kv_heads, s.head_dim, i * 50);
    b.first_frame = b.last_frame = i;
    if (i == 17) test::plant_along(b, queries, s);
    for (int64_t l = 0; l < s.layers; ++l) keys_per_layer[static_cast<size_t>(l)].push_back(group_keys(b.keys[l]));
    bank.add(b);
  }
  for (int64_t l = 0; l < s.layers; ++l) {
    write_npy(dir + "/q_" + std::to_string(l) + ".npy", queries[static_cast<size_t>(l)].queries);
    write_npy(dir + "/group_keys_" + std::to_string(l) + ".npy", at::cat(keys_per_layer[static_cast<size_t>(l)]));
  }
  const int64_t budget_groups = 3;
  std::ofstream(dir + "/settings.json") << nlohmann::json{
      {"retain_tokens", ctr.retain_tokens}, {"similarity_threshold", ctr.similarity_threshold}, {"k", ctr.k},
      {"beta", ctr.beta}, {"seed", seed}, {"batch", 2}, {"group_size", 50}, {"bits", 4}, {"layers", s.layers},
      {"kv_heads", s.kv_heads}, {"budget", budget_groups * 50 - 10}}.dump();  // rounded up to 3 groups
  REQUIRE(test::run_python("streamingtom_reference.py", dir));

  for (int64_t f = 0; f < kFrames; ++f) {
    INFO("frame " << f);
    const auto tag = std::to_string(f) + ".npy";
    const at::Tensor mask = ctr_static_mask(frames[f], f ? frames[f - 1] : at::Tensor(), ctr.similarity_threshold);
    CHECK(at::equal(read_npy(dir + "/ctr_static_" + tag), mask.to(at::kByte)));
    CHECK(at::equal(ours[static_cast<size_t>(f)].rows, read_npy(dir + "/ctr_rows_" + tag)));
    CHECK(at::allclose(ours[static_cast<size_t>(f)].tokens, read_npy(dir + "/ctr_tokens_" + tag), 1e-6, 1e-6));
  }

  const at::Tensor decoded = codec.decode(codec.encode(kv), {100, 2, 8}, at::kFloat);
  CHECK(at::allclose(decoded, read_npy(dir + "/oqm_decoded.npy"), 0, 1e-6));
  const at::Tensor bound = codec.scales_per_value(codec.encode(kv), {100, 2, 8}) / 2;
  CHECK(((decoded - kv).abs() <= bound * (1 + 1e-5) + 1e-6).all().item<bool>());

  InternalRetrieval retrieval({budget_groups, 1, "cosine"});
  for (int64_t l = 0; l < s.layers; ++l) {
    INFO("layer " << l);
    std::vector<int64_t> chosen = retrieval.select(queries[static_cast<size_t>(l)], bank);
    std::sort(chosen.begin(), chosen.end());
    const at::Tensor expected = read_npy(dir + "/selected_" + std::to_string(l) + ".npy");
    CHECK(chosen == std::vector<int64_t>(expected.data_ptr<int64_t>(), expected.data_ptr<int64_t>() + expected.numel()));
    CHECK(std::find(chosen.begin(), chosen.end(), 17) != chosen.end());
  }
  std::filesystem::remove_all(dir);
}

}  // namespace svqa
