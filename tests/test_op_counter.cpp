// Host work counted per phase (core/nn/op_counter): what it counts, and that a ReKV frame's encode and
// a question's retrieval make no call that would wait for a GPU (counted on the CPU by the same counter).

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <string>

#include "engine/question_answerer.h"
#include "engine/visual_units.h"
#include "core/nn/op_counter.h"
#include "models/backbones/torchscript_backbone.h"
#include "strategies/encoding/register_builtin.h"
#include "strategies/kit/rekv_sliding_window.h"
#include "strategies/retrieval/internal/internal.h"
#include "tests/strategy_fixtures.h"

namespace svqa {

TEST_CASE("op counter: operator calls per phase, the synchronising ones apart", "[op_counter]") {
  at::InferenceMode inference;
  OpCounter counter;
  const auto x = at::ones({4});
  {
    const OpPhaseScope retrieval(OpPhase::retrieval);
    (void)(x * 2).sum().item<float>();  // mul, sum, item → _local_scalar_dense: one synchronisation
    const OpPhaseScope gather(OpPhase::gather);  // the innermost scope wins
    (void)at::nonzero(x > 0);
  }
  (void)(x + 1);
  CHECK(counter.counts(OpPhase::retrieval).ops >= 3);
  CHECK(counter.counts(OpPhase::retrieval).syncs == 1);
  CHECK(counter.counts(OpPhase::gather).syncs == 1);
  CHECK(counter.counts(OpPhase::other).ops >= 1);
  CHECK(counter.counts(OpPhase::other).syncs == 0);
  CHECK(counter.total().ops == counter.counts(OpPhase::retrieval).ops + counter.counts(OpPhase::gather).ops +
                                   counter.counts(OpPhase::other).ops);
  counter.reset();
  CHECK(counter.total().ops == 0);
  CHECK_THROWS(OpCounter());  // one at a time
}

TEST_CASE("a ReKV frame's encode and a question's retrieval wait on no device", "[tiny_backbone]") {
  at::InferenceMode inference;
  TorchScriptBackbone backbone(std::string(SVQA_TINY_EXPORTS) + "/llava_onevision", at::kCPU);
  const auto sink_ids = backbone.tokenizer().encode("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n");
  // n_local 20: the window is full (the sinks their own segment) from the third frame of 9 tokens.
  RekvSlidingWindow encoder(RekvOptions{20});
  MemoryBank bank(test::cpu_bank(backbone.num_layers()));
  encoder.begin_stream(backbone, sink_ids, bank);
  const Frames frames = test::random_frames(8, 48, 48, 1.0);
  VisualUnitMaker maker(backbone, frames);
  OpCounter counter;
  for (int64_t f = 0; f < 8; ++f) {
    const auto units = maker.make(f, 1, encoder.sinks().size(), encoder.next_position());
    counter.reset();
    {
      const OpPhaseScope llm(OpPhase::llm);
      encoder.encode(backbone, units, bank);
    }
    INFO("frame " << f);
    CHECK(counter.counts(OpPhase::llm).ops > 0);
    CHECK(counter.counts(OpPhase::bank).ops > 0);
    CHECK(counter.counts(OpPhase::llm).syncs == 0);
    CHECK(counter.counts(OpPhase::bank).syncs == 0);
  }
  // 3 of the 8 blocks retrieved: the top-k's choice is read, not every block taken.
  InternalRetrieval retrieval({3, 1, "dot"});
  counter.reset();
  const auto answer = answer_question(backbone, encoder, builtin_encoder_traits("rekv_sliding_window", RekvOptions{20}),
                                      bank, retrieval, {"q", "What happens in the video?", 10.0},
                                      "\nWhat happens?<|im_end|>\n<|im_start|>assistant\n", {std::nullopt, 1});
  CHECK(answer.selected.front().size() == 3);
  CHECK(counter.counts(OpPhase::retrieval).ops > 0);
  CHECK(counter.counts(OpPhase::gather).ops > 0);
  CHECK(counter.counts(OpPhase::retrieval).syncs == 0);
  CHECK(counter.counts(OpPhase::gather).syncs == 0);
}

}  // namespace svqa
