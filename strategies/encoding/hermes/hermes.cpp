#include "strategies/encoding/hermes/hermes.h"

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/layer_over_context.h"
#include "models/backbones/backbone.h"
#include "models/backbones/full_context.h"
#include "strategies/kit/sink_prefill.h"

namespace svqa {

void HermesOptions::declare(Schema<HermesOptions>& s) {
  s.field("budget", &HermesOptions::budget,
          "memory tokens each layer keeps (the reference's kv_size, the same for every layer); a compaction runs "
          "whenever the cache, sinks included, holds more")
      .min(1)
      .max(kMaxTokensOption);
  s.field("short_term_ratio", &HermesOptions::short_term_ratio,
          "share of the layers, from the first, that are short-term memory (load_model: 0.1)")
      .min(0)
      .max(1);
  s.field("long_term_ratio", &HermesOptions::long_term_ratio,
          "share of the layers, from the last, that are long-term memory with a summary token (0.3)")
      .min(0)
      .max(1);
  s.field("max_position_embeddings", &HermesOptions::max_position_embeddings,
          "the LLM's position limit: once a position passes it minus 1024, a compaction re-indexes the kept "
          "tokens densely after the sinks (the reference reads the model config's; 32768: LLaVA-OV's Qwen2)")
      .min(1025)
      .max(1e9);
  s.field("local_query", &HermesOptions::local_query,
          "pseudo query whose attention scores the short-term layers (the reference's local query)");
  s.field("global_query", &HermesOptions::global_query,
          "pseudo query whose attention scores the long-term layers; mid layers use \"local; global\"");
  s.field("record_positions", &HermesOptions::record_positions,
          "write every layer's memory positions (row 0) into each record, extra.hermes.positions: which tokens "
          "each layer holds (tests; L x budget numbers a question)");
  s.check("long_term_ratio", [](const HermesOptions& o) {
    if (o.short_term_ratio + o.long_term_ratio <= 1) return std::string();
    return "plus short_term_ratio (" + format_number(o.short_term_ratio) + ") is " +
           format_number(o.short_term_ratio + o.long_term_ratio) + "; the two tiers' shares must sum to at most 1";
  });
}

void Hermes::begin_stream(Backbone& backbone, const std::vector<int64_t>& sink_ids, MemoryBank& bank) {
  (void)bank;
  sinks_ = prefill_sinks(backbone, sink_ids);
  rules_ = layer_rules(backbone.num_layers(), options_.short_term_ratio, options_.long_term_ratio);
  local_ids_ = backbone.tokenizer().encode(options_.local_query);
  global_ids_ = backbone.tokenizer().encode(options_.global_query);
  mixed_ids_ = backbone.tokenizer().encode(options_.local_query + "; " + options_.global_query);
  if (local_ids_.empty() || global_ids_.empty())
    throw std::invalid_argument("encoding.options.local_query / global_query: empty after tokenizing");
  next_position_ = sinks_.size() ? svqa::next_position(sinks_.positions) : 0;
  compactions_ = reindexings_ = 0;
  layer_tokens_.assign(static_cast<size_t>(backbone.num_layers()), 0);
  layer_positions_.assign(static_cast<size_t>(backbone.num_layers()), {});
}

void Hermes::encode(Backbone& backbone, const std::vector<VisualUnit>& units, MemoryBank& bank) {
  for (const auto& unit : units) {
    encode_unit(backbone, unit, bank);
    if (sinks_.size() + layer_tokens(bank, 0) > options_.budget) compact(backbone, bank);
    next_position_ = std::numeric_limits<int64_t>::max();
    for (int64_t l = 0; l < backbone.num_layers(); ++l) {
      layer_tokens_[static_cast<size_t>(l)] = layer_tokens(bank, l);
      if (options_.record_positions) layer_positions_[static_cast<size_t>(l)] = positions_in(bank, l);
      next_position_ = std::min(next_position_, layer_next(bank, l));
    }
  }
}

// Where layer `layer`'s next token goes: after the last one it holds (its positions ascend).
int64_t Hermes::layer_next(const MemoryBank& bank, int64_t layer) const {
  int64_t next = sinks_.size() ? svqa::next_position(sinks_.positions) : 0;
  for (const int64_t id : bank.blocks_in_layer(layer)) next = std::max(next, svqa::next_position(bank.info(id).positions));
  return next;
}

// The unit through every layer, each at that layer's next positions (the reference's per-layer
// position ids), attending to [sinks | the layer's cache] and causally to itself. Layers whose next
// positions agree share one Frame block.
void Hermes::encode_unit(Backbone& backbone, const VisualUnit& unit, MemoryBank& bank) {
  if (unit.deepstack.defined())
    throw std::invalid_argument("hermes: Qwen3-VL's DeepStack units are not supported (the reference runs LLaVA-OV)");
  const int64_t layers = backbone.num_layers();
  const auto encoded = unit.positions.to(at::kCPU);
  std::vector<int64_t> starts;
  std::vector<at::Tensor> positions;
  for (int64_t l = 0; l < layers; ++l) {
    starts.push_back(layer_next(bank, l));
    positions.push_back(contiguous_positions(encoded, starts.back()));
  }
  auto kv = forward_over_memory(backbone, unit.tokens.to(backbone.device(), backbone.dtype()),
                                {&sinks_, &bank, positions});
  std::map<int64_t, KvBlock> by_start;  // a layer's next position -> the block its layers share
  for (int64_t l = 0; l < layers; ++l) {
    const auto i = static_cast<size_t>(l);
    auto [it, added] = by_start.try_emplace(starts[i]);
    if (added) {
      it->second = empty_block(layers, Granularity::Frame, positions[i]);
      it->second.first_frame = unit.first_frame, it->second.last_frame = unit.last_frame;
      it->second.start_time = unit.start_time, it->second.end_time = unit.end_time;
    }
    set_layer(it->second, l, std::move(kv.keys[i]), std::move(kv.values[i]));
  }
  for (auto& entry : by_start) bank.add(std::move(entry.second));
}

std::vector<int64_t> Hermes::positions_in(const MemoryBank& bank, int64_t layer) const {
  std::vector<int64_t> out;
  for (const int64_t id : bank.blocks_in_layer(layer)) {
    const auto row = bank.info(id).positions[0].contiguous();
    out.insert(out.end(), row.data_ptr<int64_t>(), row.data_ptr<int64_t>() + row.numel());
  }
  return out;
}

int64_t Hermes::layer_tokens(const MemoryBank& bank, int64_t layer) const {
  int64_t n = 0;
  for (const int64_t id : bank.blocks_in_layer(layer)) n += bank.info(id).num_tokens();
  return n;
}

// Per layer, the attention [n] of the pseudo query `ids` (at each layer's next positions, run
// through every layer as a forward with output_attentions) to the layer's memory tokens: the mean over
// heads and query tokens, sinks and the query's own tokens left out.
std::vector<at::Tensor> Hermes::query_attention(Backbone& backbone, const MemoryBank& bank,
                                                const std::vector<int64_t>& ids) {
  std::vector<at::Tensor> positions;
  for (int64_t l = 0; l < backbone.num_layers(); ++l)
    positions.push_back(text_positions(layer_next(bank, l), static_cast<int64_t>(ids.size())));
  const MemoryPass pass{&sinks_, &bank, positions, /*memory_attention=*/true};
  return forward_over_memory(backbone, backbone.embed(at::tensor(ids, at::kLong)), pass).memory_attention;
}

// Per layer, the attention of its tier's pseudo query: local (short-term), mixed (mid), global (long-term).
std::vector<at::Tensor> Hermes::tier_attention(Backbone& backbone, const MemoryBank& bank) {
  const auto local = query_attention(backbone, bank, local_ids_);
  const auto global = query_attention(backbone, bank, global_ids_);
  const auto mixed = query_attention(backbone, bank, mixed_ids_);
  std::vector<at::Tensor> attention;
  for (size_t l = 0; l < rules_.size(); ++l)
    attention.push_back(rules_[l].tier == MemoryTier::Short ? local[l]
                        : rules_[l].tier == MemoryTier::Long ? global[l] : mixed[l]);
  return attention;
}

// Every layer cut to its budget by its tier's rule (the bank rewrites each layer as one Segment
// block). Positions are re-indexed once any layer's passes the limit.
void Hermes::compact(Backbone& backbone, MemoryBank& bank) {
  const auto kept = hermes_keep(tier_attention(backbone, bank), rules_, options_.budget);
  const int64_t sinks_next = sinks_.size() ? svqa::next_position(sinks_.positions) : 0;
  std::vector<LayerMemory> memories;
  int64_t highest = sinks_next - 1;
  for (int64_t l = 0; l < backbone.num_layers(); ++l) {
    memories.push_back(bank.layer_memory(l));
    highest = std::max(highest, svqa::next_position(memories.back().positions) - 1);
  }
  const bool reindex = highest > options_.max_position_embeddings - 1024;
  for (int64_t l = 0; l < backbone.num_layers(); ++l) {
    const auto i = static_cast<size_t>(l);
    bank.replace_layer(l, shrink_layer(memories[i], kept[i], {rules_[i].tier == MemoryTier::Long, sinks_next, reindex}));
  }
  ++compactions_;
  reindexings_ += reindex ? 1 : 0;
}

void Hermes::add_record_fields(nlohmann::json& extra) const {
  extra["hermes"] = {{"compactions", compactions_}, {"reindexings", reindexings_}, {"layer_tokens", layer_tokens_}};
  if (options_.record_positions) extra["hermes"]["positions"] = layer_positions_;
}

}  // namespace svqa
