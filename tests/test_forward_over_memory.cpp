// The one per-layer Q/K/V loop (forward_layers) and the pass over memory built on it
// (forward_over_memory), which the sinks' prefill, InfiniPot-V and HERMES run: on the tiny export,
// against the plain causal decoder.

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <string>
#include <utility>
#include <vector>

#include "core/memory/memory_bank.h"
#include "core/nn/attention.h"
#include "engine/layer_over_context.h"
#include "engine/visual_units.h"
#include "models/backbones/full_context.h"
#include "models/backbones/torchscript_backbone.h"
#include "strategies/kit/sink_prefill.h"
#include "tests/strategy_fixtures.h"

namespace svqa {
namespace {

TorchScriptBackbone tiny() { return TorchScriptBackbone(std::string(SVQA_TINY_EXPORTS) + "/llava_onevision", at::kCPU); }

at::Tensor causal(const LayerQkv& qkv) { return attend(qkv.q, qkv.k, qkv.v, AttentionMask{}).out; }

}  // namespace

TEST_CASE("forward_layers runs every sequence through each layer in turn and stops where attend returns nothing",
          "[tiny_backbone]") {
  at::InferenceMode inference;
  auto backbone = tiny();
  const auto a = backbone.embed(at::tensor(std::vector<int64_t>{1, 2, 3}, at::kLong));
  const auto b = backbone.embed(at::tensor(std::vector<int64_t>{4, 5}, at::kLong));
  std::vector<std::pair<int64_t, size_t>> calls;
  const auto out = forward_layers(backbone, {{a, b}, {}, [&](int64_t l, size_t s, const at::Tensor&, const LayerQkv& qkv) {
                                               calls.emplace_back(l, s);
                                               return causal(qkv);
                                             }});
  const int64_t layers = backbone.num_layers();
  REQUIRE(static_cast<int64_t>(calls.size()) == 2 * layers);
  for (int64_t l = 0; l < layers; ++l) {
    CHECK(calls[static_cast<size_t>(2 * l)] == std::make_pair(l, size_t{0}));
    CHECK(calls[static_cast<size_t>(2 * l + 1)] == std::make_pair(l, size_t{1}));
  }
  at::Tensor h = b;  // the same loop by hand
  for (int64_t l = 0; l < layers; ++l) h = backbone.layer_out(l, h, causal(backbone.layer_qkv(l, h)));
  CHECK(at::equal(out[1], h));

  calls.clear();
  const auto stopped = forward_layers(backbone, {{a, b}, {}, [&](int64_t l, size_t s, const at::Tensor&, const LayerQkv& qkv) {
                                                   calls.emplace_back(l, s);
                                                   return l == 1 ? at::Tensor() : causal(qkv);
                                                 }});
  CHECK(calls.size() == 3);  // (0, 0), (0, 1), (1, 0): the pass ends at layer 1's first sequence
  CHECK(at::equal(stopped[0], backbone.layer_out(0, a, causal(backbone.layer_qkv(0, a)))));
}

TEST_CASE("new tokens over the bank's memory and the sinks are the same tokens after them in one causal forward",
          "[tiny_backbone]") {
  at::InferenceMode inference;
  auto backbone = tiny();
  const auto sink_ids = backbone.tokenizer().encode("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n");
  const auto n_sinks = static_cast<int64_t>(sink_ids.size());
  at::manual_seed(11);
  Frames frames{at::randint(0, 256, {2, 48, 48, 3}, at::kByte), {0.0, 1.0}, 1.0};
  VisualUnitMaker maker(backbone, frames);
  const auto units = maker.make(0, 2, n_sinks, n_sinks);

  // Each frame over the memory before it, stored as a block; then a question over both.
  const SinkKv sinks = prefill_sinks(backbone, sink_ids);
  MemoryBank bank(test::cpu_bank(backbone.num_layers()));
  for (const auto& u : units) {
    auto kv = forward_over_memory(backbone, u.tokens, {&sinks, &bank, {u.positions}});
    KvBlock block = empty_block(backbone.num_layers(), Granularity::Frame, u.positions);
    for (int64_t l = 0; l < backbone.num_layers(); ++l) set_layer(block, l, kv.keys[l], kv.values[l]);
    bank.add(std::move(block));
  }
  const auto question = backbone.embed(at::tensor(backbone.tokenizer().encode("What is shown?"), at::kLong));
  const int64_t n = question.size(0), start = next_position(units.back().positions);
  const auto over = forward_over_memory(backbone, question, {&sinks, &bank, {text_positions(start, n)}, true});

  FullContextDecoder decoder(backbone);
  decoder.record_hidden_states(true);
  const auto sink_embeds = backbone.embed(at::tensor(sink_ids, at::kLong));
  decoder.forward(at::cat({sink_embeds, units[0].tokens, units[1].tokens, question}),
                  at::cat({text_positions(0, n_sinks), units[0].positions, units[1].positions, text_positions(start, n)}, 1));
  const auto& hidden = decoder.hidden_states();
  const int64_t total = hidden.front().size(0), memory = total - n - n_sinks;
  for (int64_t l = 0; l < backbone.num_layers(); ++l) {
    INFO("layer " << l);
    const auto h = l == 0 ? question : hidden[static_cast<size_t>(l - 1)].narrow(0, total - n, n);
    const auto qkv = backbone.layer_qkv(l, h);
    CHECK((over.keys[l] - qkv.k).abs().max().item<float>() < 1e-4);
    CHECK((over.values[l] - qkv.v).abs().max().item<float>() < 1e-4);
    CHECK(over.memory_attention[l].size(0) == memory);  // the frames' tokens, sinks and the question left out
  }
}

}  // namespace svqa
