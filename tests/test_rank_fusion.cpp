// Reciprocal-rank fusion (strategies/kit/rank_fusion) against the Python transcription of the
// formula (tests/fixtures/rrf/make_cases.py, 120 random ranking pairs with ties and missing items),
// and Mem-Stream's rrf_mixture on a bank where the answer is planted: a block ranked high by both
// experts beats blocks ranked first by only one of them.

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/memory/memory_bank.h"
#include "strategies/kit/rank_fusion.h"
#include "strategies/retrieval/rrf_mixture/rrf_mixture.h"
#include "tests/strategy_fixtures.h"

namespace svqa {
namespace {

at::Tensor scores_of(const nlohmann::json& list) {
  std::vector<double> v;
  for (const auto& x : list) v.push_back(x.is_null() ? std::numeric_limits<double>::quiet_NaN() : x.get<double>());
  return at::tensor(v, at::kDouble);
}

}  // namespace

TEST_CASE("RRF equals the Python transcription of the formula on 120 random ranking pairs", "[retrieval][rrf]") {
  std::ifstream in("tests/fixtures/rrf/cases.json");
  REQUIRE(in);
  const auto cases = nlohmann::json::parse(in);
  REQUIRE(cases.size() >= 100);
  for (size_t c = 0; c < cases.size(); ++c) {
    INFO("case " << c);
    const auto& x = cases[c];
    const auto internal = scores_of(x["internal"]), external = scores_of(x["external"]);
    CHECK(descending_ranks(internal) == x["ranks"][0].get<std::vector<int64_t>>());
    CHECK(descending_ranks(external) == x["ranks"][1].get<std::vector<int64_t>>());
    const auto fused = reciprocal_rank_fusion({internal, external}, x["weights"].get<std::vector<double>>(),
                                              x["k"].get<double>());
    const auto want = x["fused"].get<std::vector<double>>();
    for (size_t i = 0; i < want.size(); ++i) CHECK(fused[static_cast<int64_t>(i)].item<double>() == Approx(want[i]).epsilon(1e-12));
    CHECK(top_rows(fused, x["count"].get<int64_t>()) == x["top"].get<std::vector<int64_t>>());
  }
}

TEST_CASE("RRF: ranked high by both experts beats ranked first by only one", "[retrieval][rrf]") {
  // Row 2 is second in both rankings; row 0 first only internally, row 4 first only externally.
  const auto internal = at::tensor({9.0, 1.0, 8.0, 2.0, 0.0, 3.0}, at::kDouble);
  const auto external = at::tensor({-0.9, 0.1, 0.8, 0.2, 0.9, 0.3}, at::kDouble);
  const auto fused = reciprocal_rank_fusion({internal, external}, {1, 1}, 60);
  CHECK(top_rows(fused, 1) == std::vector<int64_t>{2});
  CHECK(top_rows(internal, 1) == std::vector<int64_t>{0});
  CHECK(top_rows(external, 1) == std::vector<int64_t>{4});
  // Weights shift the balance: with the internal expert alone, its own first.
  CHECK(top_rows(reciprocal_rank_fusion({internal, external}, {1, 0}, 60), 1) == std::vector<int64_t>{0});
  CHECK_THROWS_WITH(reciprocal_rank_fusion({internal}, {1, 1}, 60), Catch::Contains("one weight per ranking"));
}

TEST_CASE("rrf_mixture retrieves the block both experts rank high, per layer", "[retrieval][rrf][tiny_siglip]") {
  constexpr int64_t layers = 2, heads = 4, kv = 2, d = 4, n_blocks = 10;
  auto model = test::tiny_siglip();
  const std::string question = "a red ball on the table";
  // External ranking: the pool's frames ordered by cosine to the question.
  at::manual_seed(3);
  const auto pool = at::randint(0, 256, {200, 32, 32, 3}, at::kByte);
  const auto cosine = at::matmul(model->embed_images(pool), model->embed_text(question));
  const auto by_cosine = std::get<1>(cosine.sort(0, /*descending=*/true));
  // Block i holds the frame of external rank ext_rank[i] (0 = best); block 9 the worst.
  const std::vector<int64_t> ext_rank = {0, 1, 20, 30, 40, 50, 60, 70, 80, 199};
  std::vector<int64_t> rows;
  for (const int64_t r : ext_rank) rows.push_back(by_cosine[r].item<int64_t>());
  const auto frames = pool.index_select(0, at::tensor(rows, at::kLong));

  // Internal ranking: representatives along each layer's mean query, scaled; block 9 first, block 1
  // second, block 0 last.
  const std::vector<double> scale = {0.5, 9, 8, 7, 6, 5, 4, 3, 2, 10};
  std::vector<LayerQuery> queries;
  // The query heads sharing a kv head alike, so a representative can be parallel to the query.
  for (int64_t l = 0; l < layers; ++l)
    queries.push_back({l, at::randn({3, kv, 1, d}).expand({3, kv, heads / kv, d}).reshape({3, heads, d}), at::randn({3, kv, d})});
  MemoryBank bank({layers, at::kCPU, -1, ""});
  RrfMixtureOptions options;
  options.model = "(shared)";
  options.retrieve_size = 1;
  auto make = [&](double wi, double we, const std::string& fusion = "rrf") {
    auto o = options;
    o.internal_weight = wi, o.external_weight = we, o.fusion = fusion;
    auto s = std::make_unique<RrfMixture>(o, model);
    s->begin_stream();
    return s;
  };
  auto both = make(1, 1), internal_only = make(1, 0), external_only = make(0, 1), concat = make(1, 1, "l2_concat");
  for (int64_t i = 0; i < n_blocks; ++i) {
    auto b = test::frame_block(layers, i, i);
    for (int64_t l = 0; l < layers; ++l)
      b.representatives.push_back(grouped_query(queries[static_cast<size_t>(l)].queries.mean(0), kv) * scale[static_cast<size_t>(i)]);
    bank.add(b);
    VisualUnit u;
    u.rgb = frames.narrow(0, i, 1);
    u.first_frame = u.last_frame = i;
    for (auto* s : {both.get(), internal_only.get(), external_only.get(), concat.get()}) s->observe(u);
  }
  test::StubBackbone backbone;
  for (auto* s : {both.get(), internal_only.get(), external_only.get(), concat.get()})
    s->begin_question(backbone, {"q", question, 0}, bank);
  for (int64_t l = 0; l < layers; ++l) {
    INFO("layer " << l);
    CHECK(internal_only->select(queries[static_cast<size_t>(l)], bank) == std::vector<int64_t>{9});
    CHECK(external_only->select(queries[static_cast<size_t>(l)], bank) == std::vector<int64_t>{0});
    CHECK(both->select(queries[static_cast<size_t>(l)], bank) == std::vector<int64_t>{1});
    // Early fusion: every planted representative is parallel to the query (internal cosine 1), so
    // the concatenated cosine follows the external expert alone.
    CHECK(concat->select(queries[static_cast<size_t>(l)], bank) == std::vector<int64_t>{0});
  }
  // The records: the fusion per block and each expert's own score.
  const auto fused = both->block_scores();
  REQUIRE(fused.size() == n_blocks);
  CHECK(fused.at(1) == Approx(2.0 / 62));
  CHECK(fused.at(9) == Approx(1.0 / 61 + 1.0 / 70));
  const auto experts = both->expert_block_scores();
  REQUIRE(experts.count("internal") == 1);
  REQUIRE(experts.count("external") == 1);
  CHECK(experts.at("external").at(0) == Approx(cosine[rows[0]].item<double>()).epsilon(1e-5));
  CHECK(experts.at("internal").at(9) > experts.at("internal").at(1));
}

}  // namespace svqa
