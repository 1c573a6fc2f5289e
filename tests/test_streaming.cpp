// The streaming path on tiny random exports of the three architectures: ReKV with the whole stream
// in its window and every block retrieved must answer exactly as the full-context model does
// (Qwen3-VL: its units' timestamp text and DeepStack features included).

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <string>

#include "engine/question_answerer.h"
#include "engine/visual_units.h"
#include "models/backbones/deepstack.h"
#include "models/backbones/full_context.h"
#include "models/backbones/torchscript_backbone.h"
#include "strategies/encoding/register_builtin.h"
#include "strategies/kit/rekv_sliding_window.h"
#include "strategies/retrieval/baselines/baselines.h"
#include "strategies/retrieval/internal/internal.h"
#include "tests/strategy_fixtures.h"

#ifndef SVQA_TINY_EXPORTS
#error "SVQA_TINY_EXPORTS must name the directory the CTest fixture exports tiny backbones to"
#endif

namespace svqa {
namespace {

using test::random_frames;

at::Tensor embed_ids(Backbone& b, const std::vector<int64_t>& ids) { return b.embed(at::tensor(ids, at::kLong)); }

}  // namespace

TEST_CASE("ReKV with the stream in its window and all blocks retrieved equals the full context", "[tiny_backbone]") {
  at::InferenceMode inference;
  for (const std::string arch : {"llava_onevision", "qwen2_5_vl", "qwen3_vl"}) {
    INFO(arch);
    TorchScriptBackbone backbone(std::string(SVQA_TINY_EXPORTS) + "/" + arch, at::kCPU);
    const bool qwen = arch != "llava_onevision", qwen3 = arch == "qwen3_vl";
    const Frames frames = qwen3  ? random_frames(6, 64, 96, 1.0)
                          : qwen ? random_frames(6, 140, 168, 1.0)
                                 : random_frames(6, 48, 48, 1.0);
    const auto sink_ids = backbone.tokenizer().encode("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n");
    const std::string prompt = "\nWhat happens?<|im_end|>\n<|im_start|>assistant\n";

    for (const auto policy : {PositionPolicy::Contiguous, PositionPolicy::Original}) {
      RekvSlidingWindow encoder(RekvOptions{1000000});
      MemoryBank bank(test::cpu_bank(backbone.num_layers()));
      encoder.begin_stream(backbone, sink_ids, bank);
      VisualUnitMaker maker(backbone, frames);
      const auto units = maker.make(0, 6, encoder.sinks().size(), encoder.next_position());
      encoder.encode(backbone, units, bank);
      REQUIRE(bank.size() == (qwen ? 3 : 6));

      InternalRetrieval retrieval({64, 1, "dot"});
      const auto answer = answer_question(backbone, encoder,
                                          builtin_encoder_traits("rekv_sliding_window", RekvOptions{1000000}), bank,
                                          retrieval, {"q", "What happens in the video?", 10.0}, prompt, {policy, 5});

      // The reference: one causal forward over [sinks | every unit | prompt], DeepStack at the units' rows.
      std::vector<at::Tensor> embeds{embed_ids(backbone, sink_ids)}, positions{text_positions(0, sink_ids.size())};
      std::vector<DeepStack> deepstack;
      int64_t row = static_cast<int64_t>(sink_ids.size());
      for (const auto& u : units) {
        embeds.push_back(u.tokens), positions.push_back(u.positions);
        if (u.deepstack.defined()) deepstack.push_back({u.deepstack, at::arange(row, row + u.tokens.size(0), at::kLong)});
        row += u.tokens.size(0);
      }
      CHECK(deepstack.size() == (qwen3 ? units.size() : 0));
      if (qwen3) CHECK((units[0].text_before > 0 && units[0].text_after == 1));  // "<0.5 seconds><|vision_start|>" … "<|vision_end|>"
      const auto prompt_ids = backbone.tokenizer().encode(prompt);
      embeds.push_back(embed_ids(backbone, prompt_ids));
      positions.push_back(text_positions(next_position(at::cat(positions, 1)), prompt_ids.size()));
      FullContextDecoder reference(backbone);
      const auto logits = reference.forward(at::cat(embeds), at::cat(positions, 1), concat_deepstack(deepstack));
      if (qwen3) {  // DeepStack changes the answer's logits: the encoder must have applied it
        FullContextDecoder without(backbone);
        CHECK((without.forward(at::cat(embeds), at::cat(positions, 1)) - logits).abs().max().item<float>() > 1e-3);
      }

      for (const auto& layer : answer.selected) CHECK(layer.size() == static_cast<size_t>(bank.size()));
      CHECK((answer.prompt_logits - logits).abs().max().item<float>() <= 1e-4);
      CHECK(answer.ids == reference.generate(logits, 5));
    }
  }
}

TEST_CASE("a window smaller than the stream separates the sinks and changes the memory", "[tiny_backbone]") {
  at::InferenceMode inference;
  TorchScriptBackbone backbone(std::string(SVQA_TINY_EXPORTS) + "/llava_onevision", at::kCPU);
  const Frames frames = random_frames(8, 48, 48, 1.0);
  const auto sink_ids = backbone.tokenizer().encode("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n");
  auto encode = [&](int64_t n_local) {
    RekvSlidingWindow encoder(RekvOptions{n_local});
    MemoryBank bank(test::cpu_bank(backbone.num_layers()));
    encoder.begin_stream(backbone, sink_ids, bank);
    VisualUnitMaker maker(backbone, frames);
    encoder.encode(backbone, maker.make(0, 8, encoder.sinks().size(), encoder.next_position()), bank);
    return bank.block(7).keys.back().clone();
  };
  const auto full = encode(1000000);
  // 20 tokens: about two frames of 9 tokens. Layer 0's keys see no attention yet; later layers' do.
  const auto windowed = encode(20);
  CHECK((full - windowed).abs().max().item<float>() > 1e-3);
  CHECK(at::allclose(encode(1000000), full));
}

}  // namespace svqa
