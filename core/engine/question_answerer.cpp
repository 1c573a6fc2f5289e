#include "core/engine/question_answerer.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "core/nn/attention.h"
#include "core/nn/sink_window.h"
#include "models/backbones/backbone.h"
#include "models/backbones/full_context.h"

namespace svqa {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

at::Tensor embed_text(Backbone& backbone, const std::string& text) {
  const auto ids = backbone.tokenizer().encode(text);
  if (ids.empty()) throw std::invalid_argument("question: empty text");
  return backbone.embed(at::tensor(ids, at::kLong));
}

// The encoder's answer window (ReKV's fallback) with its sinks on the model's device; n_local 0: none.
SinkWindow sink_window(Backbone& backbone, const EncodingStrategy& encoder, const RotaryEmbedding& rope) {
  SinkWindow w;
  w.n_local = encoder.answer_window();
  if (w.n_local <= 0) return w;
  const auto& sinks = encoder.sinks();
  for (size_t l = 0; l < sinks.keys.size(); ++l) {
    w.keys.push_back(sinks.keys[l].to(backbone.device(), backbone.dtype()));
    w.values.push_back(sinks.values[l].to(backbone.device(), backbone.dtype()));
  }
  w.query_tables = rope.tables(text_positions(w.n_local - 1, 1).to(backbone.device()));
  return w;
}

}  // namespace

Answer answer_question(Backbone& backbone, const EncodingStrategy& encoder, const MemoryBank& bank,
                       RetrievalStrategy& retrieval, const QuestionInfo& question, const std::string& prompt,
                       const AnswerOptions& options) {
  Answer answer;
  const int64_t layers = backbone.num_layers();
  const auto rope = text_rotary(backbone.manifest());
  std::vector<KvCache> past(static_cast<size_t>(layers));
  std::vector<int64_t> next(layers);

  answer.policy = options.policy.value_or(encoder.position_policy());
  SinkWindow window = sink_window(backbone, encoder, rope);

  // Encode positions of the stream's blocks, for the contiguous policy, when they tile one stream.
  std::vector<at::Tensor> slots;
  if (encoder.blocks_tile_stream())
    for (int64_t id = 0; id < bank.size(); ++id) slots.push_back(bank.info(id).positions);

  // Pass 1: retrieval, layer by layer (as many times as the strategy asks; the last one is kept).
  auto t0 = std::chrono::steady_clock::now();
  QuestionInfo with_sinks = question;
  with_sinks.sinks = &encoder.sinks();
  retrieval.begin_question(backbone, with_sinks, bank);
  // A strategy that chose in begin_question needs no queries: the question is not run.
  const bool run_question = retrieval.selects_per_layer();
  const at::Tensor question_embeds = run_question ? embed_text(backbone, question.text) : at::Tensor();
  const at::Tensor prompt_embeds = embed_text(backbone, prompt);
  const int64_t T = run_question ? question_embeds.size(0) : 0;
  // Each layer's context buffer keeps room for what follows it: the question here, then the prompt and the answer.
  const int64_t room = std::max(T, prompt_embeds.size(0) + options.max_new_tokens);
  const int passes = std::max(1, retrieval.retrieval_passes());
  for (int pass = 0; pass < passes; ++pass) {
    const bool kept = pass + 1 == passes;
    at::Tensor h = question_embeds;
    for (int64_t l = 0; l < layers; ++l) {
      const auto qkv = run_question ? backbone.layer_qkv(l, h) : LayerQkv{};
      const auto ids = retrieval.select(LayerQuery{l, qkv.q, qkv.k, pass}, bank);
      const auto gather_start = std::chrono::steady_clock::now();
      auto ctx = assemble_layer(l, encoder.sinks(), bank, ids, answer.policy, encoder.next_position(), slots, rope,
                                backbone.device(), backbone.dtype(), room);
      answer.gather_seconds += seconds_since(gather_start);
      const int64_t context = ctx.kv.defined() ? ctx.kv.size() : 0;

      // The question attends to its context and itself; its own K/V are then dropped (ReKV). After
      // the last layer nothing reads its hidden state: that layer only selects.
      if (run_question && l + 1 < layers) {
        const auto tables = rope.tables(text_positions(ctx.next_position, T).to(backbone.device()));
        at::Tensor out;
        if (ctx.kv.defined()) {
          auto [k, v] = ctx.kv.extend(T);
          k.copy_(qkv.k);
          apply_rotary_(k, tables);
          v.copy_(qkv.v);
          out = attend_sink_window(qkv.q, tables, ctx.kv.keys(), ctx.kv.values(), window, l);
          ctx.kv.truncate(context);
        } else {
          out = attend_sink_window(qkv.q, tables, apply_rotary(qkv.k, tables), qkv.v, window, l);
        }
        h = backbone.layer_out(l, h, out);
      }
      if (kept) {
        answer.selected.push_back(std::move(ctx.block_ids));
        answer.context_tokens.push_back(context);
        past[static_cast<size_t>(l)] = std::move(ctx.kv);
        next[l] = ctx.next_position;
      }
    }
  }
  answer.retrieve_seconds = seconds_since(t0);
  answer.block_scores = retrieval.block_scores();
  answer.expert_block_scores = retrieval.expert_block_scores();

  // Pass 2: the answer prompt over [sinks | selected]; pass 3: greedy decoding.
  t0 = std::chrono::steady_clock::now();
  FullContextDecoder decoder(backbone);
  decoder.set_past(std::move(past), std::move(next));
  decoder.set_sink_window(std::move(window));
  answer.prompt_logits = decoder.forward_text(prompt_embeds);
  answer.prefill_seconds = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  answer.ids = decoder.generate(answer.prompt_logits, options.max_new_tokens);
  auto text_ids = answer.ids;  // the text leaves out the EOS id that ended it
  const auto& eos = backbone.manifest().eos_ids;
  if (!text_ids.empty() && std::find(eos.begin(), eos.end(), text_ids.back()) != eos.end()) text_ids.pop_back();
  answer.text = backbone.tokenizer().decode(text_ids);
  answer.decode_seconds = seconds_since(t0);
  return answer;
}

}  // namespace svqa
