// HERMES (strategies/encoding/hermes): the tiers of a 28-layer model as the reference's thresholds
// give them; on planted attention, long-term layers keep exactly the planted anchors and, where
// attention says nothing (constant), every other layer keeps exactly the newest tokens; a long-term
// layer's summary token is the mean of what it drops, right after its last kept token, and
// re-indexing packs the kept tokens after the sinks. On the tiny exports (LLaVA-OneVision and
// Qwen2.5-VL) every layer holds at most its budget after every frame, compacts from the frame the
// rule says, stores one block per layer and answers from the memory as it is; Qwen3-VL is refused.
// tests/python/test_hermes.py holds the whole path to the Python transcription of the reference.

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/config/schema.h"
#include "engine/question_answerer.h"
#include "engine/visual_units.h"
#include "models/backbones/torchscript_backbone.h"
#include "strategies/encoding/hermes/hermes.h"
#include "strategies/encoding/hermes/hierarchy.h"
#include "strategies/encoding/hermes/layer_shrink.h"
#include "strategies/encoding/register_builtin.h"
#include "strategies/retrieval/memory_as_is/memory_as_is.h"
#include "tests/strategy_fixtures.h"

#ifndef SVQA_TINY_EXPORTS
#error "SVQA_TINY_EXPORTS must name the directory the CTest fixture exports tiny backbones to"
#endif

namespace svqa {
namespace {

std::vector<int64_t> values_of(const at::Tensor& t) {
  const auto c = t.contiguous();
  return {c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel()};
}

std::vector<int64_t> range(int64_t from, int64_t to) {
  std::vector<int64_t> v;
  for (int64_t i = from; i < to; ++i) v.push_back(i);
  return v;
}

int64_t layer_tokens(const MemoryBank& bank, int64_t layer) {
  int64_t n = 0;
  for (const int64_t id : bank.blocks_in_layer(layer)) n += bank.info(id).num_tokens();
  return n;
}

HermesOptions budget_of(int64_t budget) {
  HermesOptions o;
  o.budget = budget;
  o.short_term_ratio = 0.34;  // the tiny models' 3 layers: short, mid, long
  o.long_term_ratio = 0.33;
  return o;
}

}  // namespace

TEST_CASE("HERMES's tiers: int(L * 0.1) short-term layers, from int(L * 0.7) long-term, mid between", "[hermes]") {
  const auto rules = layer_rules(28, 0.1, 0.3);
  REQUIRE(rules.size() == 28);
  for (int64_t l = 0; l < 28; ++l) {
    INFO("layer " << l);
    const auto want = l < 2 ? MemoryTier::Short : l >= 19 ? MemoryTier::Long : MemoryTier::Mid;
    CHECK(rules[static_cast<size_t>(l)].tier == want);
  }
  CHECK(rules[0].recency_alpha == 1.0);
  CHECK(rules[0].smoothing == 0.1);
  CHECK(rules[2].recency_alpha == 1.0);  // progress 0
  CHECK(rules[2].decay == 20.0);
  CHECK(rules[18].recency_alpha == Approx(1.0 - 0.9 * 16.0 / 17.0));
  CHECK(rules[18].decay == Approx(20 - 19.5 * 16.0 / 17.0));
  CHECK(rules[18].smoothing == 0.3);
  CHECK(rules[27].recency_alpha == 0.0);
  CHECK(rules[27].smoothing == 0.4);
}

TEST_CASE("planted attention: long-term layers keep the anchors, the others the newest tokens", "[hermes]") {
  const int64_t n = 30, budget = 6;
  const auto rules = layer_rules(10, 0.1, 0.3);  // layer 0 short, 1..6 mid, 7..9 long
  const std::vector<int64_t> anchors{2, 5, 9, 13, 21};  // budget − 1 of them
  SECTION("anchors: the long-term layers' attention peaks there") {
    std::vector<at::Tensor> attention;
    for (int64_t l = 0; l < 10; ++l) {
      auto a = at::full({n}, 0.01, at::kFloat);
      if (l >= 7)
        for (const int64_t i : anchors) a[i] = 0.5;
      attention.push_back(a);
    }
    const auto kept = hermes_keep(attention, rules, budget);
    for (int64_t l = 7; l < 10; ++l) CHECK(values_of(kept[static_cast<size_t>(l)]) == anchors);
  }
  SECTION("constant attention: recency alone decides below the long-term layers") {
    const std::vector<at::Tensor> attention(10, at::full({n}, 0.03, at::kFloat));
    const auto kept = hermes_keep(attention, rules, budget);
    for (int64_t l = 0; l < 7; ++l) CHECK(values_of(kept[static_cast<size_t>(l)]) == range(n - budget, n));
    for (int64_t l = 7; l < 10; ++l) CHECK(kept[static_cast<size_t>(l)].size(0) == budget - 1);
  }
  SECTION("a budget above the tokens keeps them all") {
    const std::vector<at::Tensor> attention(10, at::rand({4}));
    for (const auto& k : hermes_keep(attention, rules, 100)) CHECK(values_of(k) == range(0, 4));
  }
}

TEST_CASE("a long-term layer folds what it drops into a summary token after its last kept token", "[hermes]") {
  at::manual_seed(3);
  const LayerMemory m{at::randn({6, 2, 4}), at::randn({6, 2, 4}), text_positions(10, 6)};
  const auto kept = at::tensor({0, 2, 3}, at::kLong);
  const auto plain = shrink_layer(m, kept, {false, 4, false});
  CHECK(values_of(plain.positions[0]) == std::vector<int64_t>{10, 12, 13});
  CHECK(plain.keys.equal(m.keys.index_select(0, kept)));

  const auto folded = shrink_layer(m, kept, {true, 4, false});
  REQUIRE(folded.keys.size(0) == 4);
  CHECK(values_of(folded.positions[0]) == std::vector<int64_t>{10, 12, 13, 14});
  const auto dropped = at::tensor({1, 4, 5}, at::kLong);
  CHECK(at::allclose(folded.keys[3], m.keys.index_select(0, dropped).mean(0)));
  CHECK(at::allclose(folded.values[3], m.values.index_select(0, dropped).mean(0)));

  const auto packed = shrink_layer(m, kept, {true, 4, true});  // re-indexed after 4 sinks
  CHECK(values_of(packed.positions[0]) == std::vector<int64_t>{4, 5, 6, 7});
  const auto nothing_kept = shrink_layer(m, at::zeros({0}, at::kLong), {true, 4, false});
  CHECK(values_of(nothing_kept.positions[0]) == std::vector<int64_t>{4});  // right after the sinks
  const auto all_kept = shrink_layer(m, at::arange(6, at::kLong), {true, 4, false});
  CHECK(all_kept.keys.size(0) == 6);  // nothing dropped: no summary
}

TEST_CASE("HERMES's options: each bad one is one line naming its key", "[hermes]") {
  auto error = [](const std::string& yaml) {
    try {
      parse_options<HermesOptions>(parse_yaml_text(yaml, "exp.yaml"), "encoding.options");
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error("{}").empty());
  CHECK(error("{budget: 0}") == "exp.yaml: encoding.options.budget: expected an integer in [1, 10000000], got 0");
  CHECK(error("{short_term_ratio: 0.8, long_term_ratio: 0.5}") ==
        "exp.yaml: encoding.options.long_term_ratio: plus short_term_ratio (0.8) is 1.3; the two tiers' shares "
        "must sum to at most 1");
  CHECK(error("{kv_size: 4000}").rfind("exp.yaml: encoding.options.kv_size: unknown key", 0) == 0);
  CHECK(error("{max_position_embeddings: 1024}").find("encoding.options.max_position_embeddings: expected an integer "
                                                      "in [1025, ") != std::string::npos);
}

TEST_CASE("HERMES holds at most its budget in every layer after every frame", "[tiny_backbone][hermes]") {
  at::InferenceMode inference;
  for (const std::string arch : {"llava_onevision", "qwen2_5_vl"}) {
    INFO(arch);
    TorchScriptBackbone backbone(std::string(SVQA_TINY_EXPORTS) + "/" + arch, at::kCPU);
    const bool qwen = arch != "llava_onevision";
    const int64_t layers = backbone.num_layers(), units_n = qwen ? 6 : 12;
    const Frames frames = qwen ? test::random_frames(2 * units_n, 140, 168, 1.0) : test::random_frames(units_n, 48, 48, 1.0);
    VisualUnitMaker maker(backbone, frames);
    MemoryBank bank(test::cpu_bank(layers));
    const auto sink_ids = backbone.tokenizer().encode("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n");
    Hermes probe(budget_of(1000000));
    probe.begin_stream(backbone, sink_ids, bank);
    const auto units = maker.make(0, qwen ? 2 * units_n : units_n, probe.sinks().size(), probe.next_position());
    REQUIRE(static_cast<int64_t>(units.size()) == units_n);  // Qwen2.5-VL: a unit is a 2-frame temporal patch
    const int64_t t = units[0].tokens.size(0), sinks = probe.sinks().size();
    const int64_t budget = 3 * t + t / 2;  // passed within a few units

    Hermes encoder(budget_of(budget));
    encoder.begin_stream(backbone, sink_ids, bank);
    int64_t compactions = 0, held = 0;
    for (int64_t u = 0; u < units_n; ++u) {
      INFO("unit " << u);
      encoder.encode(backbone, {units[static_cast<size_t>(u)]}, bank);
      held += t;
      if (sinks + held > budget) held = std::min(held, budget), ++compactions;  // compact once sinks + layer 0 pass it
      CHECK(encoder.compactions() == compactions);
      for (int64_t l = 0; l < layers; ++l) {
        CHECK(layer_tokens(bank, l) <= budget);
        CHECK(layer_tokens(bank, l) == held);
      }
    }
    REQUIRE(compactions > 1);
    for (int64_t l = 0; l < layers; ++l) {  // one Segment block per layer, stored in that layer only
      const auto ids = bank.blocks_in_layer(l);
      REQUIRE(ids.size() == 1);
      CHECK(bank.info(ids[0]).granularity == Granularity::Segment);
      for (int64_t other = 0; other < layers; ++other) CHECK(bank.in_layer(ids[0], other) == (other == l));
      const auto p = bank.info(ids[0]).positions[0];
      CHECK(at::equal(std::get<0>(p.sort()), p));
    }
    MemoryAsIs as_is;
    const auto answer = answer_question(backbone, encoder, builtin_encoder_traits("hermes", budget_of(budget)), bank,
                                        as_is, {"q", "What happens?", 20.0},
                                        "\nWhat happens?<|im_end|>\n<|im_start|>assistant\n", {std::nullopt, 2});
    CHECK(answer.policy == PositionPolicy::Original);
    for (int64_t l = 0; l < layers; ++l) CHECK(answer.context_tokens[static_cast<size_t>(l)] == sinks + budget);
  }
}

TEST_CASE("HERMES refuses Qwen3-VL's DeepStack units in one line", "[tiny_backbone][hermes]") {
  at::InferenceMode inference;
  TorchScriptBackbone backbone(std::string(SVQA_TINY_EXPORTS) + "/qwen3_vl", at::kCPU);
  const Frames frames = test::random_frames(2, 64, 96, 1.0);
  VisualUnitMaker maker(backbone, frames);
  MemoryBank bank(test::cpu_bank(backbone.num_layers()));
  Hermes encoder(budget_of(100));
  encoder.begin_stream(backbone, backbone.tokenizer().encode("<|im_start|>user\n"), bank);
  const auto units = maker.make(0, 2, encoder.sinks().size(), encoder.next_position());
  CHECK_THROWS_WITH(encoder.encode(backbone, units, bank), Catch::Contains("hermes: Qwen3-VL's DeepStack units are not supported"));
}

}  // namespace svqa
