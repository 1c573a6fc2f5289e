#include "core/engine/question_answerer.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "core/nn/attention.h"
#include "models/backbone.h"
#include "models/full_context.h"

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

}  // namespace

Answer answer_question(Backbone& backbone, const EncodingStrategy& encoder, const MemoryBank& bank,
                       RetrievalStrategy& retrieval, const QuestionInfo& question, const std::string& prompt,
                       const AnswerOptions& options) {
  Answer answer;
  const int64_t layers = backbone.num_layers();
  const auto rope = text_rotary(backbone.manifest());
  std::vector<at::Tensor> past_k(layers), past_v(layers);
  std::vector<int64_t> next(layers);

  std::vector<at::Tensor> slots;  // encode positions of the stream's blocks, for the contiguous policy
  for (int64_t id = 0; id < bank.size(); ++id) slots.push_back(bank.info(id).positions);

  // Pass 1: retrieval, layer by layer.
  auto t0 = std::chrono::steady_clock::now();
  retrieval.begin_question(backbone, question, bank);
  at::Tensor h = embed_text(backbone, question.text);
  const int64_t T = h.size(0);
  for (int64_t l = 0; l < layers; ++l) {
    const auto qkv = backbone.layer_qkv(l, h);
    auto ids = retrieval.select(LayerQuery{l, qkv.q, qkv.k}, bank);
    const auto gather_start = std::chrono::steady_clock::now();
    std::vector<KvBlock> blocks;
    blocks.reserve(ids.size());
    for (const int64_t id : ids) blocks.push_back(bank.block(id));
    std::vector<const KvBlock*> ptrs;
    for (const auto& b : blocks) ptrs.push_back(&b);
    const auto ctx = assemble_layer(l, encoder.sinks(), ptrs, options.policy, encoder.next_position(), slots, rope,
                                    backbone.device(), backbone.dtype());
    answer.gather_seconds += seconds_since(gather_start);
    std::stable_sort(blocks.begin(), blocks.end(),
                     [](const KvBlock& a, const KvBlock& b) { return a.first_frame < b.first_frame; });
    std::vector<int64_t> ordered;
    for (const auto& b : blocks) ordered.push_back(b.id);
    answer.selected.push_back(std::move(ordered));
    answer.context_tokens.push_back(ctx.keys.defined() ? ctx.keys.size(0) : 0);

    const auto tables = rope.tables(text_positions(ctx.next_position, T).to(backbone.device()), backbone.dtype());
    const auto k = apply_rotary(qkv.k, tables);
    const auto out = ctx.keys.defined()
                         ? attend(apply_rotary(qkv.q, tables), {ctx.keys, k}, {ctx.values, qkv.v}, AttentionMask{})
                         : attend(apply_rotary(qkv.q, tables), k, qkv.v, AttentionMask{});
    h = backbone.layer_out(l, h, out.out);
    past_k[l] = ctx.keys;
    past_v[l] = ctx.values;
    next[l] = ctx.next_position;
  }
  answer.retrieve_seconds = seconds_since(t0);
  answer.block_scores = retrieval.block_scores();
  answer.expert_block_scores = retrieval.expert_block_scores();

  // Pass 2: the answer prompt over [sinks | selected]; pass 3: greedy decoding.
  t0 = std::chrono::steady_clock::now();
  FullContextDecoder decoder(backbone);
  decoder.set_past(std::move(past_k), std::move(past_v), std::move(next));
  answer.prompt_logits = decoder.forward_text(embed_text(backbone, prompt));
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
