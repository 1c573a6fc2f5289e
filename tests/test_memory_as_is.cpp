// The answering path with no retrieval (retrieval memory_as_is): each layer's stored blocks are its
// context as they stand, and the question is never run through a retrieval pass. On a tiny export it
// must answer exactly as full_context (every block, chosen without the question) does, under both
// position policies, and never call the strategy's select().

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <string>

#include "engine/question_answerer.h"
#include "engine/visual_units.h"
#include "models/backbones/torchscript_backbone.h"
#include "strategies/encoding/register_builtin.h"
#include "strategies/kit/rekv_sliding_window.h"
#include "strategies/retrieval/baselines/baselines.h"
#include "strategies/retrieval/memory_as_is/memory_as_is.h"
#include "tests/strategy_fixtures.h"

#ifndef SVQA_TINY_EXPORTS
#error "SVQA_TINY_EXPORTS must name the directory the CTest fixture exports tiny backbones to"
#endif

namespace svqa {

TEST_CASE("memory_as_is answers from every stored block without a retrieval pass", "[tiny_backbone]") {
  at::InferenceMode inference;
  TorchScriptBackbone backbone(std::string(SVQA_TINY_EXPORTS) + "/llava_onevision", at::kCPU);
  const Frames frames = test::random_frames(5, 48, 48, 1.0);
  const auto sink_ids = backbone.tokenizer().encode("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n");
  const std::string prompt = "\nWhat happens?<|im_end|>\n<|im_start|>assistant\n";
  RekvSlidingWindow encoder(RekvOptions{1000000});
  MemoryBank bank(test::cpu_bank(backbone.num_layers()));
  encoder.begin_stream(backbone, sink_ids, bank);
  VisualUnitMaker maker(backbone, frames);
  encoder.encode(backbone, maker.make(0, 5, encoder.sinks().size(), encoder.next_position()), bank);
  REQUIRE(bank.size() == 5);

  MemoryAsIs as_is;
  CHECK_FALSE(as_is.retrieves());
  CHECK_THROWS_AS(as_is.select(LayerQuery{0, {}, {}, 0}, bank), std::logic_error);
  for (const auto policy : {PositionPolicy::Contiguous, PositionPolicy::Original}) {
    TimeBaseline all(TimeBaseline::Rule::All, 0);
    const QuestionInfo question{"q", "What happens in the video?", 10.0};
    const auto traits = builtin_encoder_traits("rekv_sliding_window", RekvOptions{1000000});
    const auto want = answer_question(backbone, encoder, traits, bank, all, question, prompt, {policy, 4});
    const auto got = answer_question(backbone, encoder, traits, bank, as_is, question, prompt, {policy, 4});
    CHECK(got.selected == want.selected);
    CHECK(got.context_tokens == want.context_tokens);
    CHECK(at::equal(got.prompt_logits, want.prompt_logits));
    CHECK(got.ids == want.ids);
    CHECK(got.block_scores.empty());
  }
}

}  // namespace svqa
