// InfiniPot-V (strategies/encoding/infinipot_v): its TaR + VaN choice equals the Python
// transcription of the reference code on planted caches (tests/fixtures/infinipot_v/cases.json,
// made by make_cases.py: the planted tokens are the ones kept); the reference's layer-adaptive
// pooling groups; on the tiny LLaVA-OneVision export, a cap above the stream encodes exactly as the
// full-context model, and under a cap the cache never holds more than the cap at any frame, is
// compacted at the frames the rule says into one block per layer of stored rows, and answers from
// the memory as it is.

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/question_answerer.h"
#include "engine/visual_units.h"
#include "models/backbones/torchscript_backbone.h"
#include "strategies/encoding/infinipot_v/infinipot_v.h"
#include "strategies/encoding/infinipot_v/tar_van.h"
#include "strategies/encoding/register_builtin.h"
#include "strategies/kit/rekv_sliding_window.h"
#include "strategies/retrieval/memory_as_is/memory_as_is.h"
#include "tests/strategy_fixtures.h"

#ifndef SVQA_TINY_EXPORTS
#error "SVQA_TINY_EXPORTS must name the directory the CTest fixture exports tiny backbones to"
#endif

namespace svqa {
namespace {

// [N, heads, d] from the case's nested lists.
at::Tensor cache_tensor(const nlohmann::json& rows) {
  std::vector<double> flat;
  for (const auto& token : rows)
    for (const auto& head : token)
      for (const auto& x : head) flat.push_back(x.get<double>());
  const auto n = static_cast<int64_t>(rows.size()), heads = static_cast<int64_t>(rows[0].size());
  return at::tensor(flat, at::kDouble).view({n, heads, -1});
}

int64_t layer_tokens(const MemoryBank& bank, int64_t layer) {
  int64_t n = 0;
  for (const int64_t id : bank.blocks_in_layer(layer)) n += bank.info(id).num_tokens();
  return n;
}

std::vector<int64_t> sink_ids(Backbone& b) {
  return b.tokenizer().encode("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n");
}

InfinipotVOptions capped(int64_t cap, int64_t keep) {
  InfinipotVOptions o;
  o.cap_frames = cap;
  o.keep_frames = keep;
  return o;
}

}  // namespace

TEST_CASE("TaR + VaN keep what the reference code's transcription keeps on planted caches", "[infinipot_v]") {
  std::ifstream in("tests/fixtures/infinipot_v/cases.json");
  REQUIRE(in);
  const auto cases = nlohmann::json::parse(in);
  REQUIRE(cases.size() >= 7);
  for (const auto& c : cases) {
    INFO(c["name"].get<std::string>());
    TarVanParams p{c["tokens_per_frame"].get<int64_t>(), c["keep_frames"].get<int64_t>(), c["tar_ratio"].get<double>(),
                   c["query_ratio"].get<double>(), -1, 3, c["grid_height"].get<int64_t>()};
    if (c["adaptive_pooling"].get<bool>()) adaptive_pooling(c["layer"].get<int64_t>(), c["layers"].get<int64_t>(), p);
    const auto kept = tar_van_keep(cache_tensor(c["keys"]), cache_tensor(c["values"]), p);
    const auto want = c["kept"].get<std::vector<int64_t>>();
    CHECK(std::vector<int64_t>(kept.data_ptr<int64_t>(), kept.data_ptr<int64_t>() + kept.numel()) == want);
  }
}

TEST_CASE("layer-adaptive pooling: the reference's quarters, and svqa's rule where it would fail", "[infinipot_v]") {
  auto pooling = [](int64_t layer, int64_t layers) {
    TarVanParams p;
    adaptive_pooling(layer, layers, p);
    return std::pair{p.pool_dims, p.pool_size};
  };
  CHECK(pooling(0, 28) == std::pair<int64_t, int64_t>{2, 7});
  CHECK(pooling(6, 28) == std::pair<int64_t, int64_t>{2, 7});
  CHECK(pooling(7, 28) == std::pair<int64_t, int64_t>{2, 5});
  CHECK(pooling(14, 28) == std::pair<int64_t, int64_t>{1, 3});
  CHECK(pooling(27, 28) == std::pair<int64_t, int64_t>{-1, 3});
  CHECK(pooling(35, 36) == std::pair<int64_t, int64_t>{-1, 3});
  CHECK(pooling(29, 30) == std::pair<int64_t, int64_t>{-1, 3});  // 29 / 7 = 4: past the lists, the last group
  CHECK(pooling(1, 2) == std::pair<int64_t, int64_t>{2, 5});     // under 4 layers: one layer per group
}

TEST_CASE("InfiniPot-V with a cap above the stream encodes as the full-context model", "[tiny_backbone][infinipot_v]") {
  at::InferenceMode inference;
  TorchScriptBackbone backbone(std::string(SVQA_TINY_EXPORTS) + "/llava_onevision", at::kCPU);
  const Frames frames = test::random_frames(6, 48, 48, 1.0);
  VisualUnitMaker maker(backbone, frames);
  MemoryBank full(test::cpu_bank(backbone.num_layers())), capped_bank(test::cpu_bank(backbone.num_layers()));
  RekvSlidingWindow rekv(RekvOptions{1000000});
  InfinipotV infinipot(capped(100, 50));
  rekv.begin_stream(backbone, sink_ids(backbone), full);
  infinipot.begin_stream(backbone, sink_ids(backbone), capped_bank);
  const auto units = maker.make(0, 6, rekv.sinks().size(), rekv.next_position());
  rekv.encode(backbone, units, full);
  infinipot.encode(backbone, units, capped_bank);
  REQUIRE(capped_bank.size() == 6);
  CHECK(infinipot.compactions() == 0);
  CHECK(infinipot.next_position() == rekv.next_position());
  for (int64_t id = 0; id < 6; ++id)
    for (int64_t l = 0; l < backbone.num_layers(); ++l) {
      CHECK(at::allclose(capped_bank.block(id).keys[l], full.block(id).keys[l], 1e-4, 1e-5));
      CHECK(at::allclose(capped_bank.block(id).values[l], full.block(id).values[l], 1e-4, 1e-5));
    }
}

TEST_CASE("InfiniPot-V's cache never exceeds its cap and is compacted in place per layer", "[tiny_backbone][infinipot_v]") {
  at::InferenceMode inference;
  TorchScriptBackbone backbone(std::string(SVQA_TINY_EXPORTS) + "/llava_onevision", at::kCPU);
  const int64_t layers = backbone.num_layers(), frames_n = 11, cap = 4, keep = 2;
  const Frames frames = test::random_frames(frames_n, 48, 48, 1.0);
  VisualUnitMaker maker(backbone, frames);
  MemoryBank bank(test::cpu_bank(layers));
  InfinipotV encoder(capped(cap, keep));
  encoder.begin_stream(backbone, sink_ids(backbone), bank);
  const auto units = maker.make(0, frames_n, encoder.sinks().size(), encoder.next_position());
  const int64_t t = units[0].tokens.size(0);
  // Frame by frame: 1, 2, 3, 4 → compacted to 2; 3, 4 → 2; ... (cap 4, keep 2): compactions after frames 4, 6, 8, 10.
  int64_t expected_frames = 0, expected_compactions = 0;
  for (int64_t f = 0; f < frames_n; ++f) {
    INFO("frame " << f);
    encoder.encode(backbone, {units[static_cast<size_t>(f)]}, bank);
    if (++expected_frames == cap) expected_frames = keep, ++expected_compactions;
    CHECK(encoder.cache_frames() == expected_frames);
    CHECK(encoder.compactions() == expected_compactions);
    for (int64_t l = 0; l < layers; ++l) {
      CHECK(layer_tokens(bank, l) <= cap * t);
      CHECK(layer_tokens(bank, l) == expected_frames * t);
    }
    CHECK(bank.accounting().layer_tokens == layers * expected_frames * t);
  }
  // After the last compaction (frame 10): one Segment block per layer, present in that layer only,
  // holding rows of what was encoded (positions from the stream, ascending), then frame 11.
  for (int64_t l = 0; l < layers; ++l) {
    const auto ids = bank.blocks_in_layer(l);
    REQUIRE(ids.size() == 2);
    const auto& seg = bank.info(ids[0]);
    CHECK(seg.granularity == Granularity::Segment);
    CHECK(seg.num_tokens() == keep * t);
    for (int64_t other = 0; other < layers; ++other) CHECK(bank.in_layer(ids[0], other) == (other == l));
    const auto p = seg.positions[0];
    CHECK(at::equal(std::get<0>(p.sort()), p));
    CHECK(p.max().item<int64_t>() < units[10].positions[0].min().item<int64_t>());
    CHECK(bank.info(ids[1]).first_frame == 10);
  }
  CHECK(bank.accounting().blocks == layers + 1);

  MemoryAsIs as_is;
  const auto answer = answer_question(backbone, encoder, builtin_encoder_traits("infinipot_v", capped(cap, keep)), bank,
                                      as_is, {"q", "What happens?", 11.0},
                                      "\nWhat happens?<|im_end|>\n<|im_start|>assistant\n", {std::nullopt, 3});
  CHECK(answer.policy == PositionPolicy::Original);
  for (int64_t l = 0; l < layers; ++l)
    CHECK(answer.context_tokens[static_cast<size_t>(l)] == encoder.sinks().size() + 3 * t);
}

}  // namespace svqa
