// MuKV end to end on tiny random exports (LLaVA-OV with 196 tokens per frame, as the paper's
// backbone, and Qwen2.5-VL): the paper's budgets, exact accounting of token subsets, equality with
// Hugging Face when one uncompressed frame block is brought back, segment leftovers, patch layouts,
// and the semi-hierarchical rerank on planted representatives.

#include <catch2/catch.hpp>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/question_answerer.h"
#include "engine/visual_units.h"
#include "models/backbones/full_context.h"
#include "models/video/npy.h"
#include "models/backbones/torchscript_backbone.h"
#include "strategies/encoding/mukv/mukv_multigrain.h"
#include "strategies/encoding/register_builtin.h"
#include "strategies/retrieval/mukv/mukv_semi_hierarchical.h"
#include "tests/strategy_fixtures.h"

#ifndef SVQA_TINY_EXPORTS
#error "SVQA_TINY_EXPORTS must name the directory the CTest fixture exports tiny backbones to"
#endif

namespace svqa {
namespace {

// The reference code's prompts around the retrieved video (LLaVA-OV); Qwen2.5-VL's chat template split at {video}.
struct Prompts {
  std::vector<int64_t> sinks;
  std::string answer;
};

Prompts prompts_for(Backbone& backbone, const std::string& question) {
  if (backbone.manifest().architecture == Architecture::LlavaOnevision)
    return {backbone.tokenizer().encode("<|im_start|>system \nYou are a helpful assistant.<|im_end|><|im_start|>user "),
            "\n" + question + "<|im_end|><|im_start|>assistant\n"};
  std::string tpl = backbone.manifest().video_prompt;
  const size_t video = tpl.find("{video}");
  std::string answer = tpl.substr(video + 7);
  answer.replace(answer.find("{question}"), 10, question);
  return {backbone.tokenizer().encode(tpl.substr(0, video)), answer};
}

struct Stream {
  TorchScriptBackbone backbone;
  Frames frames;
  Prompts prompts;
  MemoryBank bank;
  MukvMultigrain encoder;
  EncoderTraits traits;  // its registration's
  VisualUnitMaker maker;
  int64_t encoded = 0;

  Stream(const std::string& arch, Frames f, MukvOptions options)
      : backbone(std::string(SVQA_TINY_EXPORTS) + "/" + arch, at::kCPU),
        frames(std::move(f)),
        prompts(prompts_for(backbone, "What happens?")),
        bank({backbone.num_layers(), at::kCPU, -1, ""}),
        encoder(options),
        traits(builtin_encoder_traits("mukv_multigrain", options)),
        maker(backbone, frames) {
    at::set_num_threads(1);  // a tiny model: worker threads would only spin
    encoder.begin_stream(backbone, prompts.sinks, bank);
  }
  void encode(int64_t count) {
    encoder.encode(backbone, maker.make(encoded, count, encoder.sinks().size(), encoder.next_position()), bank);
    encoded += count;
  }
  Answer ask(const MukvRetrievalOptions& options, std::optional<PositionPolicy> policy = std::nullopt) {
    MukvRetrieval retrieval(options);
    const QuestionInfo question{"q", "What happens in the video?", frames.timestamps[static_cast<size_t>(encoded - 1)]};
    encoder.prepare_for_question(backbone, question, bank);
    return answer_question(backbone, encoder, traits, bank, retrieval, question, prompts.answer, {policy, 1});
  }
  nlohmann::json record() const {
    nlohmann::json extra = nlohmann::json::object();
    encoder.add_record_fields(extra);
    return extra["mukv_multigrain"];
  }
  std::vector<int64_t> ids_of(Granularity g) const {
    std::vector<int64_t> out;
    for (int64_t id = 0; id < bank.size(); ++id)
      if (bank.info(id).granularity == g) out.push_back(id);
    return out;
  }
};

int64_t tokens_of(const MemoryBank& bank, Granularity g) {
  return bank.accounting().tokens_by_granularity[static_cast<size_t>(g)];
}

}  // namespace

TEST_CASE("MuKV's paper configuration stores 767 tokens per 4 frames and brings back 20·4 + 32·19 + 12·627",
          "[tiny_backbone]") {
  at::InferenceMode inference;
  Stream s("llava_onevision_196", test::random_frames(48, 32, 32, 0.5), MukvOptions{});
  const auto& m = s.backbone.manifest();
  REQUIRE(m.vision.tokens_per_frame == 196);
  s.encode(8);
  const auto& a = s.bank.accounting();
  CHECK(a.blocks == 32 + 8 + 2);
  CHECK(tokens_of(s.bank, Granularity::Patch) == 32 * 4);
  CHECK(tokens_of(s.bank, Granularity::Frame) == 8 * 19);
  CHECK(tokens_of(s.bank, Granularity::Segment) == 2 * 627);
  CHECK(a.tokens == 2 * 767);

  // Accounting is of the kept tokens only, in every layer.
  int64_t bytes = 0;
  for (int64_t id = 0; id < s.bank.size(); ++id) {
    const auto b = s.bank.block(id);
    const int64_t kept = b.granularity == Granularity::Patch ? 4 : b.granularity == Granularity::Frame ? 19 : 627;
    CHECK(b.num_tokens() == kept);
    for (int64_t l = 0; l < s.backbone.num_layers(); ++l) {
      CHECK(b.keys[l].sizes() == at::IntArrayRef{kept, m.text.num_kv_heads, m.text.head_dim});
      CHECK(b.values[l].sizes() == b.keys[l].sizes());
    }
    bytes += b.kv_bytes();
  }
  CHECK(a.ram_bytes == bytes);
  CHECK(a.ram_bytes == a.tokens * s.backbone.num_layers() * 2 * m.text.num_kv_heads * m.text.head_dim * 4);
  CHECK(a.bytes_by_granularity[static_cast<size_t>(Granularity::Segment)] ==
        2 * 627 * s.backbone.num_layers() * 2 * m.text.num_kv_heads * m.text.head_dim * 4);
  // One representative per block (last layer), kv heads concatenated.
  CHECK(a.representative_bytes == a.blocks * m.text.num_kv_heads * m.text.head_dim * 4);

  // 8 frames: every frame and segment block, 20 of the 32 patch blocks.
  const int64_t sinks = s.encoder.sinks().size();
  auto answer = s.ask(MukvRetrievalOptions{});
  for (const auto n : answer.context_tokens) CHECK(n == sinks + 20 * 4 + 8 * 19 + 2 * 627);
  CHECK(answer.policy == PositionPolicy::Stacked);  // the encoder's default on 1-D RoPE
  // 48 frames: enough blocks of every granularity.
  s.encode(40);
  answer = s.ask(MukvRetrievalOptions{});
  for (const auto n : answer.context_tokens) CHECK(n == sinks + 20 * 4 + 32 * 19 + 12 * 627);
  // The reference's order: patches, frames, segments; the same blocks in every layer.
  const auto& chosen = answer.selected.front();
  REQUIRE(chosen.size() == 64);
  for (size_t i = 0; i < chosen.size(); ++i)
    CHECK(s.bank.info(chosen[i]).granularity == (i < 20 ? Granularity::Patch : i < 52 ? Granularity::Frame : Granularity::Segment));
  for (const auto& layer : answer.selected) CHECK(layer == chosen);
  CHECK(answer.block_scores.size() == static_cast<size_t>(s.bank.size()));
}

TEST_CASE("MuKV with ρ = 1 and one frame block brought back answers as Hugging Face on [sinks, that frame, prompt]",
          "[tiny_backbone]") {
  at::InferenceMode inference;
  const std::string dir = test::temp_dir("mukv_hf");
  std::filesystem::create_directories(dir);
  nlohmann::json cases = nlohmann::json::array();
  std::vector<at::Tensor> ours;
  for (const std::string arch : {"llava_onevision_196", "qwen2_5_vl"}) {
    INFO(arch);
    const bool qwen = arch == "qwen2_5_vl";
    MukvOptions options;
    options.keep_ratio = {1, 1, 1};
    Stream s(arch, qwen ? test::random_frames(4, 140, 168, 1.0) : test::random_frames(4, 384, 384, 1.0), options);
    s.encode(4);
    if (qwen) {  // one frame block per temporal patch, four patch bands of its merged grid, one segment
      CHECK(s.ids_of(Granularity::Frame).size() == 2);
      CHECK(s.ids_of(Granularity::Patch).size() == 8);
      CHECK(s.ids_of(Granularity::Segment).size() == 1);
      CHECK(tokens_of(s.bank, Granularity::Patch) == tokens_of(s.bank, Granularity::Frame));
    }
    MukvRetrievalOptions one;
    one.blocks = {0, 1, 0};
    for (const auto policy : {std::optional<PositionPolicy>{}, std::optional<PositionPolicy>{PositionPolicy::Contiguous}}) {
      const auto answer = s.ask(one, policy);
      CHECK(answer.policy == (qwen || policy ? PositionPolicy::Contiguous : PositionPolicy::Stacked));
      const int64_t id = answer.selected.front().at(0);
      for (const auto& layer : answer.selected) REQUIRE(layer == std::vector<int64_t>{id});
      const auto& block = s.bank.info(id);
      REQUIRE(block.granularity == Granularity::Frame);
      const std::string i = std::to_string(ours.size());
      write_npy(dir + "/" + ("frames_" + i + ".npy"),
                s.frames.rgb.narrow(0, block.first_frame, block.last_frame - block.first_frame + 1));
      cases.push_back({{"export", std::string(SVQA_TINY_EXPORTS) + "/" + arch}, {"frames", dir + "/" + ("frames_" + i + ".npy")},
                       {"before", s.prompts.sinks}, {"after", s.backbone.tokenizer().encode(s.prompts.answer)},
                       {"out", dir + "/" + ("hf_" + i + ".npy")}});
      ours.push_back(answer.prompt_logits);
    }
  }
  std::ofstream(dir + "/cases.json") << cases.dump();
  REQUIRE(test::run_python("hf_prompt_reference.py", dir + "/cases.json"));
  for (size_t i = 0; i < ours.size(); ++i) {
    INFO(cases[i].dump());
    CHECK((ours[i] - read_npy(dir + "/" + ("hf_" + std::to_string(i) + ".npy"))).abs().max().item<float>() <= 1e-4);
  }
}

TEST_CASE("MuKV segment leftovers at a question: carried into the next segment, or dropped", "[tiny_backbone]") {
  at::InferenceMode inference;
  for (const std::string leftovers : {"carry", "drop"}) {
    INFO(leftovers);
    MukvOptions options;
    options.segment_leftovers = leftovers;
    Stream s("llava_onevision_196", test::random_frames(10, 32, 32, 0.5), options);
    s.encode(6);
    s.encoder.prepare_for_question(s.backbone, {"q", "?", 10.0}, s.bank);
    CHECK(s.record()["frames_awaiting_segment"] == (leftovers == "carry" ? 2 : 0));
    CHECK(s.record()["frames_dropped_from_segments"] == (leftovers == "carry" ? 0 : 2));
    s.encode(4);
    std::vector<std::pair<int64_t, int64_t>> spans;
    for (const int64_t id : s.ids_of(Granularity::Segment)) spans.emplace_back(s.bank.info(id).first_frame, s.bank.info(id).last_frame);
    if (leftovers == "carry") {
      CHECK(spans == std::vector<std::pair<int64_t, int64_t>>{{0, 3}, {4, 7}});
      CHECK(s.record()["frames_awaiting_segment"] == 2);
    } else {
      CHECK(spans == std::vector<std::pair<int64_t, int64_t>>{{0, 3}, {6, 9}});
      CHECK(s.record()["frames_awaiting_segment"] == 0);
    }
    CHECK(s.ids_of(Granularity::Frame).size() == 10);  // frame and patch views never lose frames
  }
}

TEST_CASE("MuKV patches are row-major bands or 7×7 quadrants, and same_granularity context sees earlier blocks",
          "[tiny_backbone]") {
  at::InferenceMode inference;
  const Frames frames = test::random_frames(2, 32, 32, 0.5);
  auto stream = [&](const std::string& layout, const std::string& context) {
    MukvOptions o;
    o.keep_ratio = {1, 1, 1};
    o.granularities = {"patch", "frame"};
    o.patch_layout = layout;
    o.context = context;
    auto s = std::make_unique<Stream>("llava_onevision_196", frames, o);
    s->encode(2);
    return s;
  };
  const auto quadrants = stream("quadrants", "same_granularity");
  const int64_t start = quadrants->encoder.sinks().size();
  const auto patches = quadrants->ids_of(Granularity::Patch);
  REQUIRE(patches.size() == 8);
  // Under same_granularity blocks keep their stream positions, which show the tokens they hold.
  const auto rows = at::arange(7, at::kLong).unsqueeze(1), cols = at::arange(7, at::kLong).unsqueeze(0);
  CHECK(at::equal(quadrants->bank.info(patches[0]).positions[0], (start + rows * 14 + cols).flatten()));
  CHECK(at::equal(quadrants->bank.info(patches[3]).positions[0], (start + (rows + 7) * 14 + cols + 7).flatten()));
  CHECK(at::equal(quadrants->bank.info(patches[5]).positions[0], (start + 196 + rows * 14 + cols + 7).flatten()));

  const auto bands = stream("bands", "isolated");
  const auto band_ids = bands->ids_of(Granularity::Patch);
  for (const int64_t id : band_ids)  // each prefilled alone right after the sinks
    CHECK(at::equal(bands->bank.info(id).positions[0], at::arange(start, start + 49, at::kLong)));
  // The first frame block sees only the sinks either way; the second sees the first under same_granularity.
  const auto isolated_frames = bands->ids_of(Granularity::Frame), same_frames = quadrants->ids_of(Granularity::Frame);
  // (Isolated blocks of a unit share one pass with a block-diagonal mask: equal up to rounding.)
  CHECK((bands->bank.block(isolated_frames[0]).keys.back() - quadrants->bank.block(same_frames[0]).keys.back())
            .abs().max().item<float>() < 1e-5);
  CHECK((bands->bank.block(isolated_frames[1]).keys.back() - quadrants->bank.block(same_frames[1]).keys.back())
            .abs().max().item<float>() > 1e-3);
}

TEST_CASE("MuKV blocks prefilled together under the block mask keep what each keeps prefilled alone", "[tiny_backbone]") {
  at::InferenceMode inference;
  MukvOptions options;
  options.granularities = {"frame"};
  Stream s("llava_onevision_196", test::random_frames(3, 32, 32, 0.5), options);
  const auto units = s.maker.make(0, 3, s.encoder.sinks().size(), s.encoder.next_position());
  std::vector<at::Tensor> past_k, past_v = s.encoder.sinks().values;
  const auto rope = text_rotary(s.backbone.manifest());
  const auto tables = rope.tables(s.encoder.sinks().positions);
  for (const auto& k : s.encoder.sinks().keys) past_k.push_back(apply_rotary(k, tables));
  std::vector<BlockInput> blocks;
  for (const auto& u : units) {
    BlockInput in;
    in.tokens = u.tokens;
    in.positions = text_positions(s.encoder.sinks().size(), u.tokens.size(0));
    in.dcp.keep_ratio = 0.1;
    blocks.push_back(in);
  }
  const auto layers = attention_layer_weights(AttentionLayers::Last5, s.backbone.num_layers());
  const auto together = prefill_blocks(s.backbone, blocks, past_k, past_v, layers);
  for (size_t b = 0; b < blocks.size(); ++b) {
    const auto alone = prefill_blocks(s.backbone, {blocks[b]}, past_k, past_v, layers);
    CHECK(at::equal(together[b].block.positions, alone[0].block.positions));
    CHECK(together[b].block.num_tokens() == 19);
    for (int64_t l = 0; l < s.backbone.num_layers(); ++l)
      CHECK((together[b].block.keys[l] - alone[0].block.keys[l]).abs().max().item<float>() < 1e-5);
  }
}

TEST_CASE("semi-hierarchical rerank: a segment matching the question lifts a frame inside it", "[mukv]") {
  // Planted representatives (last layer of a 1-layer bank): the question q; segment S1 (frames
  // 0–3) close to q, S2 (frames 4–7) not; frame F_in (frame 1) scores 0.7 with q but lies in S1
  // and looks like it; frame F_out (frame 5) scores 0.8 but looks unlike S1.
  auto add = [](MemoryBank& bank, Granularity g, int64_t first, int64_t last, std::vector<float> rep) {
    KvBlock b;
    b.granularity = g;
    b.first_frame = first, b.last_frame = last;
    b.positions = text_positions(0, 1);
    b.keys = {at::zeros({1, 1, 4})};
    b.values = {at::zeros({1, 1, 4})};
    b.representatives = {at::tensor(rep)};
    return bank.add(std::move(b));
  };
  MemoryBank bank({1, at::kCPU, -1, ""});
  const int64_t s1 = add(bank, Granularity::Segment, 0, 3, {0.9f, 0.436f, 0, 0});
  const int64_t s2 = add(bank, Granularity::Segment, 4, 7, {0.1f, 0, 0.995f, 0});
  const int64_t f_in = add(bank, Granularity::Frame, 1, 1, {0.7f, 0.714f, 0, 0});
  const int64_t f_out = add(bank, Granularity::Frame, 5, 5, {0.8f, -0.6f, 0, 0});
  const auto q = at::tensor(std::vector<float>{1, 0, 0, 0});
  MukvRetrievalOptions o;
  o.blocks = {0, 1, 2};
  o.context_segments = 1;

  o.mode = "semi_hierarchical";  // F_in: 0.7·0.7 + 0.3·cos(F_in, S1) = 0.77 > F_out: 0.7·0.8 + 0.3·0.46 = 0.70
  const auto semi = mukv_select(q, bank, 0, o);
  CHECK(semi.ids == std::vector<int64_t>{f_in, s1, s2});
  CHECK(semi.scores.at(f_out) == Approx(0.8).margin(1e-3));  // the recorded scores are the question's
  o.mode = "parallel";
  CHECK(mukv_select(q, bank, 0, o).ids == std::vector<int64_t>{f_out, s1, s2});
  o.mode = "hierarchical";  // only frames inside the best segment compete
  o.blocks.frame = 2;
  CHECK(mukv_select(q, bank, 0, o).ids == std::vector<int64_t>{f_in, s1, s2});

  // Without segments the context is the question itself, so the rerank changes nothing.
  MemoryBank frames_only({1, at::kCPU, -1, ""});
  const int64_t g_in = add(frames_only, Granularity::Frame, 1, 1, {0.7f, 0.714f, 0, 0});
  const int64_t g_out = add(frames_only, Granularity::Frame, 5, 5, {0.8f, -0.6f, 0, 0});
  o.mode = "semi_hierarchical";
  CHECK(mukv_select(q, frames_only, 0, o).ids == std::vector<int64_t>{g_out, g_in});

  // The context is the best 5 of the SHORTLISTED segments (over_retrieve · k_segment = 2 here, the
  // reference's coarse candidates), not of all stored ones: S3 (far from the question, third) stays
  // out of it. With S3 in the context (the old rule) F_a, which looks like S3, would win
  // (0.7·0.75 + 0.3·0.872 = 0.787 vs 0.751); without it F_b does (0.781 vs 0.717).
  MemoryBank three({1, at::kCPU, -1, ""});
  const int64_t t1 = add(three, Granularity::Segment, 0, 3, {0.9f, 0.436f, 0, 0});
  add(three, Granularity::Segment, 4, 7, {0.8f, 0.6f, 0, 0});
  add(three, Granularity::Segment, 8, 11, {0.1f, 0, 0.995f, 0});
  add(three, Granularity::Frame, 9, 9, {0.75f, 0, 0.661f, 0});  // F_a
  const int64_t f_b = add(three, Granularity::Frame, 1, 1, {0.7f, 0.714f, 0, 0});
  MukvRetrievalOptions r;  // the reference's λ 0.3, over_retrieve 2, context_segments 5
  r.blocks = {0, 1, 1};
  CHECK(mukv_select(q, three, 0, r).ids == std::vector<int64_t>{f_b, t1});
}

}  // namespace svqa
