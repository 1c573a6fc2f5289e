// StreamKV encoding on tiny random exports: with compression off and the whole stream in the window
// the answer equals the full-context model over [sinks | segments with their summary frames | prompt];
// with guidance compression on, the stored video K/V are those of compression off (the guidance
// never leaks into memory), each layer keeps the blocks the layer-adaptive budget gave it, the
// guidance scores are those of the guidance prompt seeing only the segment, and the bank's
// accounting counts exactly what each layer stores.

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "engine/question_answerer.h"
#include "engine/visual_units.h"
#include "core/nn/attention.h"
#include "models/backbones/full_context.h"
#include "models/backbones/torchscript_backbone.h"
#include "strategies/encoding/register_builtin.h"
#include "strategies/encoding/streamkv/streamkv_segments.h"
#include "strategies/retrieval/baselines/baselines.h"
#include "strategies/retrieval/internal/internal.h"
#include "strategies/kit/layer_budget.h"
#include "strategies/retrieval/streamkv/streamkv_layer_adaptive.h"

namespace svqa {
namespace {

Frames random_frames(int64_t n, int64_t h, int64_t w) {
  at::manual_seed(5);
  Frames f{at::randint(0, 256, {n, h, w, 3}, at::kByte), {}, 1.0};
  for (int64_t i = 0; i < n; ++i) f.timestamps.push_back(static_cast<double>(i));
  return f;
}

const char* kSinks = "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n";

// Encodes `frames` in chunks of 3 units, then a question is coming.
std::vector<VisualUnit> encode_all(Backbone& backbone, StreamkvSegments& encoder, MemoryBank& bank, const Frames& frames) {
  encoder.begin_stream(backbone, backbone.tokenizer().encode(kSinks), bank);
  VisualUnitMaker maker(backbone, frames);
  const int64_t per = maker.frames_per_unit(), n = frames.rgb.size(0);
  std::vector<VisualUnit> all;
  for (int64_t first = 0; first < n; first += 3 * per) {
    auto units = maker.make(first, std::min(3 * per, n - first), encoder.sinks().size(), encoder.next_position());
    encoder.encode(backbone, units, bank);
    all.insert(all.end(), units.begin(), units.end());
  }
  encoder.prepare_for_question(backbone, QuestionInfo{"q", "", 1e9}, bank);
  return all;
}

StreamkvOptions options(const std::string& mode, int64_t m, int64_t big_m, double theta, double keep) {
  StreamkvOptions o;
  o.n_local = 1000000;
  o.segment_mode = mode;
  o.min_segment_size = m;
  o.max_segment_size = big_m;
  o.segment_theta = theta;
  o.keep_fraction = keep;
  return o;
}

}  // namespace

TEST_CASE("StreamKV without compression, stream in the window, every block retrieved = full context", "[tiny_backbone]") {
  at::InferenceMode inference;
  for (const std::string arch : {"llava_onevision", "qwen2_5_vl"}) {
    const bool qwen = arch == "qwen2_5_vl";
    TorchScriptBackbone backbone(std::string(SVQA_TINY_EXPORTS) + "/" + arch, at::kCPU);
    const Frames frames = qwen ? random_frames(10, 140, 168) : random_frames(8, 48, 48);
    const std::string prompt = "\nWhat happens?<|im_end|>\n<|im_start|>assistant\n";
    // uniform: segments of 3 and a flushed remainder; semantic with θ = −1: one segment that never
    // cuts, so every frame past the third is merged into three entries.
    for (const auto& o : {options("uniform", 1, 3, 0.99, 1.0), options("semantic", 1, 3, -1.0, 1.0)}) {
      INFO(arch << " " << o.segment_mode);
      StreamkvSegments encoder(o);
      MemoryBank bank({backbone.num_layers(), at::kCPU, -1, ""});
      const auto units = encode_all(backbone, encoder, bank, frames);

      // The reference sequence, rebuilt from the segmenter's rule: entries, then their mean, per segment.
      OnlineSegmenter seg({o.segment_mode, o.min_segment_size, o.max_segment_size, o.segment_theta});
      std::vector<Segment> segments;
      for (const auto& u : units)
        if (auto s = seg.push(u.tokens)) segments.push_back(*s);
      if (auto s = seg.flush()) segments.push_back(*s);
      REQUIRE(segments.size() == encoder.segments().size());
      CHECK(encoder.segments().back().flushed);
      std::vector<at::Tensor> embeds{backbone.embed(at::tensor(backbone.tokenizer().encode(kSinks), at::kLong))};
      std::vector<at::Tensor> positions{text_positions(0, embeds[0].size(0))};
      int64_t id = 0;
      for (const auto& s : segments) {
        std::vector<at::Tensor> entries;
        for (const auto& e : s.entries) entries.push_back(e.features);
        entries.push_back(at::stack(entries).mean(0));
        for (const auto& e : entries) {
          embeds.push_back(e);
          positions.push_back(bank.info(id++).positions);
        }
      }
      REQUIRE(id == bank.size());
      if (!qwen)  // 1-D: everything back to back after the sinks
        CHECK(at::cat(positions, 1)[0].equal(at::arange(at::cat(positions, 1).size(1), at::kLong)));
      if (o.segment_mode == "semantic") CHECK(segments.front().merges.size() == units.size() - 3);
      const auto prompt_ids = backbone.tokenizer().encode(prompt);
      embeds.push_back(backbone.embed(at::tensor(prompt_ids, at::kLong)));
      positions.push_back(text_positions(next_position(at::cat(positions, 1)), static_cast<int64_t>(prompt_ids.size())));
      FullContextDecoder reference(backbone);
      const auto logits = reference.forward(at::cat(embeds), at::cat(positions, 1));

      TimeBaseline everything(TimeBaseline::Rule::All, 0);
      // One pass of retrieve_size ≥ the bank: all of it. (The second, layer-adaptive pass may leave a block
      // out of so small a bank: the budget gives a layer about as many blocks as hold all its mass.)
      StreamkvLayerAdaptive adaptive({64, 0.5, true, 8, 128, false});
      for (RetrievalStrategy* retrieval : {static_cast<RetrievalStrategy*>(&everything),
                                           static_cast<RetrievalStrategy*>(&adaptive)}) {
        const auto answer = answer_question(backbone, encoder, builtin_encoder_traits("streamkv_segments", o), bank,
                                            *retrieval, {"q", "What happens?", 100.0}, prompt,
                                            {PositionPolicy::Contiguous, 4});
        for (const auto& layer : answer.selected) CHECK(layer.size() == static_cast<size_t>(bank.size()));
        CHECK((answer.prompt_logits - logits).abs().max().item<float>() <= 1e-4);
        CHECK(answer.ids == reference.generate(logits, 4));
      }
    }
  }
}

TEST_CASE("StreamKV guidance compression: video K/V as without it, per-layer counts from the budget, exact accounting",
          "[tiny_backbone]") {
  at::InferenceMode inference;
  for (const std::string arch : {"llava_onevision", "qwen2_5_vl"}) {
    INFO(arch);
    const bool qwen = arch == "qwen2_5_vl";
    TorchScriptBackbone backbone(std::string(SVQA_TINY_EXPORTS) + "/" + arch, at::kCPU);
    // Units of 4 and a flushed remainder: LLaVA-OV 4 + 4 + 3 frames; Qwen2.5-VL 4 + 3 two-frame patches.
    const Frames frames = qwen ? random_frames(14, 140, 168) : random_frames(11, 48, 48);
    const int64_t layers = backbone.num_layers(), kv_heads = backbone.manifest().text.num_kv_heads;
    StreamkvSegments plain(options("uniform", 1, 4, 0.99, 1.0)), compressed(options("uniform", 1, 4, 0.99, 0.5));
    MemoryBank full_bank({layers, at::kCPU, -1, ""}), bank({layers, at::kCPU, -1, ""});
    encode_all(backbone, plain, full_bank, frames);
    encode_all(backbone, compressed, bank, frames);
    REQUIRE(compressed.segments().size() == (qwen ? 2 : 3));

    // Blocks by (granularity, first frame) in the uncompressed bank.
    std::map<std::pair<Granularity, int64_t>, int64_t> twin;
    for (int64_t id = 0; id < full_bank.size(); ++id) twin[{full_bank.info(id).granularity, full_bank.info(id).first_frame}] = id;
    for (const auto& record : compressed.segments()) {
      INFO("segment from frame " << record.first_frame);
      // The uncompressed twins of its entries (in order), then of its summary.
      std::vector<int64_t> ids;
      for (int64_t id = 0; id < full_bank.size(); ++id) {
        const KvBlock& b = full_bank.info(id);
        if (b.granularity == Granularity::Frame && b.first_frame >= record.first_frame && b.last_frame <= record.last_frame)
          ids.push_back(id);
      }
      ids.push_back(twin.at({Granularity::Summary, record.first_frame}));
      const int64_t T = record.entries;
      REQUIRE(static_cast<int64_t>(ids.size()) == T + 1);
      // The allocation is the reference budget over the recorded guidance scores (compress_temp 1: bounds [1, T]).
      std::vector<at::Tensor> scores;
      for (const auto& sc : record.scores) scores.push_back(at::tensor(sc, at::kFloat));
      auto want = rescale_sum_match(cdf_layer_counts(scores, static_cast<int64_t>(layers * T * 0.5)), 1.0,
                                    static_cast<double>(std::min<int64_t>(T, static_cast<int64_t>(T * 0.5 * 2))));
      for (auto& k : want) k = std::max<int64_t>(k, 1);
      CHECK(record.kept == want);
      for (int64_t l = 0; l < layers; ++l) {
        std::set<int64_t> stored;  // entries of this segment stored in layer l
        for (const int64_t id : record.block_ids) {
          const KvBlock& b = bank.info(id);
          if (b.granularity == Granularity::Summary) CHECK(bank.in_layer(id, l));  // always kept
          if (b.granularity != Granularity::Frame || !bank.in_layer(id, l)) continue;
          const int64_t twin_id = twin.at({Granularity::Frame, b.first_frame});
          stored.insert(std::find(ids.begin(), ids.end(), twin_id) - ids.begin());
        }
        CHECK(static_cast<int64_t>(stored.size()) == record.kept[l]);
        const auto top = std::get<1>(at::topk(scores[l], record.kept[l]));  // ...the top-K_l by guidance score
        for (int64_t j = 0; j < top.size(0); ++j) CHECK(stored.count(top[j].item<int64_t>()) == 1);
      }
      // Guidance scores: the guidance prompt alone after [entries; summary] at positions from 0, no sinks.
      const auto guide_ids = backbone.tokenizer().encode(kStreamkvGuidancePrompt);
      at::Tensor h = backbone.embed(at::tensor(guide_ids, at::kLong));
      std::vector<at::Tensor> laid;
      for (const int64_t id : ids) laid.push_back(full_bank.info(id).positions);
      auto positions = at::cat(laid, 1);
      const int64_t video = positions.size(1);
      positions = at::cat({positions, text_positions(next_position(positions), h.size(0))}, 1);
      const auto tables = text_rotary(backbone.manifest()).tables(positions - positions.min());
      const RotaryTables own{tables.cos.narrow(0, video, h.size(0)), tables.sin.narrow(0, video, h.size(0))};
      for (int64_t l = 0; l < layers; ++l) {
        const auto qkv = backbone.layer_qkv(l, h);
        std::vector<at::Tensor> ks, vs, reps;
        for (const int64_t id : ids) ks.push_back(full_bank.block(id).keys[l]), vs.push_back(full_bank.block(id).values[l]);
        for (int64_t i = 0; i < T; ++i) reps.push_back(mean_key_representative(ks[i]));
        ks.push_back(qkv.k);
        vs.push_back(qkv.v);
        const auto out = attend(apply_rotary(qkv.q, own), apply_rotary(at::cat(ks), tables), at::cat(vs), AttentionMask{});
        h = backbone.layer_out(l, h, out.out);
        // The reference's score: the kv heads' mean keys repeated over their query heads, against every head's mean query.
        const auto repeated = at::stack(reps).view({T, qkv.k.size(1), -1}).repeat_interleave(qkv.q.size(1) / qkv.k.size(1), 1);
        CHECK(at::allclose(scores[l], at::matmul(repeated.flatten(1), qkv.q.mean(0).flatten()), 1e-4, 1e-4));
      }
    }
    int64_t kv_bytes = 0, layer_blocks = 0, tokens = 0;
    for (int64_t id = 0; id < bank.size(); ++id) {
      // Bit for bit the uncompressed run's K/V, in every layer the block is kept.
      const KvBlock b = bank.block(id);
      const KvBlock o = full_bank.block(twin.at({b.granularity, b.first_frame}));
      for (int64_t l = 0; l < layers; ++l) {
        if (!b.in_layer(l)) continue;
        CHECK(at::equal(b.keys[l], o.keys[l]));
        CHECK(at::equal(b.values[l], o.values[l]));
        kv_bytes += b.keys[l].numel() * b.keys[l].element_size() * 2;
        layer_blocks += 1;
        tokens += b.num_tokens();
      }
    }
    const auto& a = bank.accounting();
    CHECK(a.ram_bytes == kv_bytes);
    CHECK(a.layer_tokens == tokens);
    CHECK(a.representative_bytes == layer_blocks * kv_heads * backbone.manifest().text.head_dim * 4);  // a mean key per kv head
    CHECK(a.blocks == bank.size());
    CHECK(a.ram_bytes < full_bank.accounting().ram_bytes);
    CHECK(a.tokens_by_granularity[static_cast<int>(Granularity::Summary)] ==
          static_cast<int64_t>(compressed.segments().size()) * full_bank.info(0).num_tokens());

    // Every retrieval strategy answers from a bank whose blocks are in some layers only.
    TimeBaseline everything(TimeBaseline::Rule::All, 0), recent(TimeBaseline::Rule::Recent, 2);
    StreamkvLayerAdaptive adaptive({3, 0.5, true, 1, 128, true});
    InternalRetrieval internal({4, 2, "dot"});
    for (RetrievalStrategy* r : {static_cast<RetrievalStrategy*>(&everything), static_cast<RetrievalStrategy*>(&recent),
                                 static_cast<RetrievalStrategy*>(&adaptive), static_cast<RetrievalStrategy*>(&internal)}) {
      const auto answer = answer_question(backbone, compressed,
                                          builtin_encoder_traits("streamkv_segments", options("uniform", 1, 4, 0.99, 0.5)),
                                          bank, *r, {"q", "What happens?", 100.0},
                                          "\nWhat?<|im_end|>\n", {PositionPolicy::Contiguous, 2});
      for (int64_t l = 0; l < layers; ++l)
        for (const int64_t id : answer.selected[l]) CHECK(bank.in_layer(id, l));
    }
  }
}

}  // namespace svqa
