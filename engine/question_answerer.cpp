#include "engine/question_answerer.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <stdexcept>

#include "engine/layer_over_context.h"
#include "core/nn/op_counter.h"
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
SinkWindow sink_window(Backbone& backbone, const EncodingStrategy& encoder, const EncoderTraits& traits,
                       const RotaryEmbedding& rope) {
  SinkWindow w;
  w.n_local = traits.answer_window;
  if (w.n_local <= 0) return w;
  const auto& sinks = encoder.sinks();
  for (size_t l = 0; l < sinks.keys.size(); ++l) {
    w.keys.push_back(sinks.keys[l].to(backbone.device(), backbone.dtype()));
    w.values.push_back(sinks.values[l].to(backbone.device(), backbone.dtype()));
  }
  w.query_tables = rope.tables(text_positions(w.n_local - 1, 1).to(backbone.device()));
  return w;
}

// Encode positions of the stream's blocks, for the contiguous policy, when they tile one stream.
std::vector<at::Tensor> stream_slots(const EncoderTraits& traits, const MemoryBank& bank) {
  std::vector<at::Tensor> slots;
  if (traits.blocks_tile_stream)
    for (int64_t id = 0; id < bank.size(); ++id) slots.push_back(bank.info(id).positions);
  return slots;
}

// What every step of one question shares: the model, the memory, and how contexts are built.
struct AnswerSetup {
  Backbone& backbone;
  const EncodingStrategy& encoder;
  const MemoryBank& bank;
  RotaryEmbedding rope;
  PositionPolicy policy;
  std::vector<at::Tensor> slots;
  SinkWindow window;
};

// The context every layer answers from: its K/V buffer and the position the next token takes there.
struct AnswerContext {
  std::vector<KvCache> past;
  std::vector<int64_t> next;
};

LayerContext assemble(const AnswerSetup& s, int64_t layer, const std::vector<int64_t>& ids, int64_t room,
                      Answer& answer) {
  const auto gather_start = std::chrono::steady_clock::now();
  const OpPhaseScope phase(OpPhase::gather);
  auto ctx = assemble_layer(layer, s.encoder.sinks(), s.bank, ids, s.policy, s.encoder.next_position(), s.slots,
                            s.rope, s.backbone.device(), s.backbone.dtype(), room);
  answer.gather_seconds += seconds_since(gather_start);
  return ctx;
}

// The question's attention at layer `l`: to the layer's context and itself; its own K/V are then
// dropped (ReKV), so `ctx` is left as assembled.
at::Tensor question_attention(const AnswerSetup& s, int64_t l, const at::Tensor& h, const LayerQkv& qkv,
                              LayerContext& ctx) {
  const auto tables = s.rope.tables(text_positions(ctx.next_position, h.size(0)).to(s.backbone.device()));
  return attend_over_context(l, qkv, tables, ctx.kv, s.window);
}

// Keeps layer `l`'s context as the one the answer is prefilled over.
void keep_layer(int64_t l, LayerContext&& ctx, Answer& answer, AnswerContext& kept) {
  answer.selected.push_back(std::move(ctx.block_ids));
  answer.context_tokens.push_back(ctx.kv.defined() ? ctx.kv.size() : 0);
  kept.past[static_cast<size_t>(l)] = std::move(ctx.kv);
  kept.next[static_cast<size_t>(l)] = ctx.next_position;
}

// One retrieval pass, layer by layer: each layer selects blocks (with the question's queries there,
// when the strategy reads them); `kept`: this pass's contexts become the answer's.
void retrieval_pass(const AnswerSetup& s, RetrievalStrategy& retrieval, int pass, const at::Tensor& question_embeds,
                    int64_t room, bool kept, Answer& answer, AnswerContext& context) {
  const int64_t layers = s.backbone.num_layers();
  if (!question_embeds.defined()) {  // chosen without the question's queries: each layer only looks its blocks up
    for (int64_t l = 0; l < layers; ++l) {
      auto ctx = assemble(s, l, retrieval.select(LayerQuery{l, {}, {}, pass}, s.bank), room, answer);
      if (kept) keep_layer(l, std::move(ctx), answer, context);
    }
    return;
  }
  const auto select_and_attend = [&](int64_t l, size_t, const at::Tensor& h, const LayerQkv& qkv) {
    auto ctx = assemble(s, l, retrieval.select(LayerQuery{l, qkv.q, qkv.k, pass}, s.bank), room, answer);
    // After the last layer nothing reads the question's hidden state: that layer only selects.
    const at::Tensor out = l + 1 < layers ? question_attention(s, l, h, qkv, ctx) : at::Tensor();
    if (kept) keep_layer(l, std::move(ctx), answer, context);
    return out;
  };
  forward_layers(s.backbone, {{question_embeds}, {}, select_and_attend});
}

// Retrieval: as many passes as the strategy asks, the last one's selection kept as the context.
// `t0`: when the question's time began (its prompt embedded first, counted here as before).
AnswerContext retrieve(const AnswerSetup& s, RetrievalStrategy& retrieval, const QuestionInfo& question,
                       int64_t prompt_room, std::chrono::steady_clock::time_point t0, Answer& answer) {
  QuestionInfo with_sinks = question;
  with_sinks.sinks = &s.encoder.sinks();
  retrieval.begin_question(s.backbone, with_sinks, s.bank);
  // A strategy that chose in begin_question needs no queries: the question is not run.
  const at::Tensor question_embeds =
      retrieval.selects_per_layer() ? embed_text(s.backbone, question.text) : at::Tensor();
  // Each layer's context buffer keeps room for what follows it: the question here, then the prompt and the answer.
  const int64_t room = std::max(question_embeds.defined() ? question_embeds.size(0) : 0, prompt_room);
  const auto layers = static_cast<size_t>(s.backbone.num_layers());
  AnswerContext context{std::vector<KvCache>(layers), std::vector<int64_t>(layers)};
  const int passes = std::max(1, retrieval.retrieval_passes());
  for (int pass = 0; pass < passes; ++pass)
    retrieval_pass(s, retrieval, pass, question_embeds, room, pass + 1 == passes, answer, context);
  answer.retrieve_seconds = seconds_since(t0);
  answer.block_scores = retrieval.block_scores();
  answer.expert_block_scores = retrieval.expert_block_scores();
  return context;
}

// No retrieval (the strategy uses the memory as it is): every block each layer stores, in id order
// (the order the encoder stored them), is that layer's context; the question itself is not run.
AnswerContext memory_as_stored(const AnswerSetup& s, int64_t room, std::chrono::steady_clock::time_point t0,
                               Answer& answer) {
  const int64_t layers = s.backbone.num_layers();
  AnswerContext context{std::vector<KvCache>(static_cast<size_t>(layers)), std::vector<int64_t>(layers)};
  for (int64_t l = 0; l < layers; ++l) keep_layer(l, assemble(s, l, s.bank.blocks_in_layer(l), room, answer), answer, context);
  answer.retrieve_seconds = seconds_since(t0);
  return context;
}

// The answer prompt over each layer's context: its logits after the last prompt token.
FullContextDecoder prefill_prompt(AnswerSetup& s, AnswerContext&& context, const at::Tensor& prompt_embeds,
                                  Answer& answer) {
  const auto t0 = std::chrono::steady_clock::now();
  const OpPhaseScope phase(OpPhase::prefill);
  FullContextDecoder decoder(s.backbone);
  decoder.set_past(std::move(context.past), std::move(context.next));
  decoder.set_sink_window(std::move(s.window));
  answer.prompt_logits = decoder.forward_text(prompt_embeds);
  answer.prefill_seconds = seconds_since(t0);
  return decoder;
}

// Greedy decoding from the prompt's logits; the text leaves out the EOS id that ended it.
void decode(Backbone& backbone, FullContextDecoder& decoder, int64_t max_new_tokens, Answer& answer) {
  const auto t0 = std::chrono::steady_clock::now();
  const OpPhaseScope phase(OpPhase::decode);
  answer.ids = decoder.generate(answer.prompt_logits, max_new_tokens);
  auto text_ids = answer.ids;
  const auto& eos = backbone.manifest().eos_ids;
  if (!text_ids.empty() && std::find(eos.begin(), eos.end(), text_ids.back()) != eos.end()) text_ids.pop_back();
  answer.text = backbone.tokenizer().decode(text_ids);
  answer.decode_seconds = seconds_since(t0);
}

}  // namespace

Answer answer_question(Backbone& backbone, const EncodingStrategy& encoder, const EncoderTraits& traits,
                       const MemoryBank& bank, RetrievalStrategy& retrieval, const QuestionInfo& question,
                       const std::string& prompt, const AnswerOptions& options) {
  // Everything before the prefill (the setup, the prompt's embedding, retrieval) counts as retrieval.
  std::optional<OpPhaseScope> retrieval_phase(OpPhase::retrieval);
  Answer answer;
  answer.policy = options.policy.value_or(traits.policy_on(!backbone.manifest().text.mrope_section.empty()));
  const auto rope = text_rotary(backbone.manifest());
  AnswerSetup setup{backbone, encoder, bank, rope, answer.policy, stream_slots(traits, bank),
                    sink_window(backbone, encoder, traits, rope)};
  const auto t0 = std::chrono::steady_clock::now();
  const at::Tensor prompt_embeds = embed_text(backbone, prompt);
  const int64_t prompt_room = prompt_embeds.size(0) + options.max_new_tokens;
  auto context = retrieval.retrieves() ? retrieve(setup, retrieval, question, prompt_room, t0, answer)
                                       : memory_as_stored(setup, prompt_room, t0, answer);
  retrieval_phase.reset();
  auto decoder = prefill_prompt(setup, std::move(context), prompt_embeds, answer);
  decode(backbone, decoder, options.max_new_tokens, answer);
  return answer;
}

}  // namespace svqa
