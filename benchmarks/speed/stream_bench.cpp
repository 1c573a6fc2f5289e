#include "benchmarks/speed/stream_bench.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <stdexcept>

#include "benchmarks/speed/matmul_floor.h"
#include "benchmarks/speed/process_memory.h"
#include "benchmarks/speed/vision_floor.h"
#include "core/config/runtime.h"
#include "core/config/schema.h"
#include "engine/question_answerer.h"
#include "engine/visual_units.h"
#include "core/nn/op_counter.h"
#include "models/video/frame_source.h"
#include "models/backbones/torchscript_backbone.h"
#include "strategies/encoding/infinipot_v/infinipot_v.h"
#include "strategies/encoding/mukv/mukv_multigrain.h"
#include "strategies/encoding/register_builtin.h"
#include "strategies/kit/rekv_sliding_window.h"
#include "strategies/retrieval/internal/internal.h"
#include "strategies/retrieval/memory_as_is/memory_as_is.h"
#include "strategies/retrieval/mukv/mukv_semi_hierarchical.h"

namespace svqa {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// ReKV's LLaVA-OV prompts (reference notes §3.2, §3.7): the sinks, and a multiple-choice answer prompt.
constexpr const char* kSinkPrompt = "<|im_start|>system \nYou are a helpful assistant.<|im_end|><|im_start|>user ";
constexpr const char* kQuestion = "What is the color of the object that moves left in the video before the person is in the kitchen?";
constexpr const char* kAnswerPrompt =
    "\nQuestion: What is the color of the object that moves left in the video before the person is in the kitchen?\n"
    "Options:\n(A) red\n(B) blue\n(C) green\n(D) yellow\nOnly give the best option.<|im_end|><|im_start|>assistant\n"
    "Best option: (";

// Frames [first, first + count) of the synthetic stream: a pattern that changes every frame, at the
// export's frame size (no resize; 384 px where it resizes), made when the stream reaches them.
Frames synthetic_frames(int64_t first, int64_t count, const ImageSpec& image, double fps) {
  const int64_t h = image.height > 0 ? image.height : 384, w = image.width > 0 ? image.width : 384;
  const auto ramp = at::arange(h * w * 3, at::kLong).view({1, h * w * 3});
  const auto index = at::arange(first, first + count, at::kLong).view({count, 1});
  Frames f;
  f.rgb = ((ramp * 7 + index * 13 + ramp / (w * 3) * 5) % 251).to(at::kByte).view({count, h, w, 3});
  for (int64_t i = first; i < first + count; ++i) f.timestamps.push_back(static_cast<double>(i) / fps);
  f.fps = fps;
  f.first = first;
  return f;
}

// The MLP width, from decoder layer 0's gate projection (the manifest does not carry it).
int64_t intermediate_size(const TorchScriptBackbone& backbone) {
  for (const auto& [name, w] : backbone.layer_weights(0))
    if (name.size() >= 16 && name.compare(name.size() - 16, 16, "gate_proj.weight") == 0) return w.size(0);
  throw std::runtime_error(backbone.manifest().layer_files.front() + ": no *gate_proj.weight (the floor needs the MLP width)");
}

// Patches the vision tower sees per unit: SigLIP's position table rows (LLaVA-OV), or the unit's
// tokens times the merge (Qwen2.5-VL).
int64_t vision_patches(const TorchScriptBackbone& backbone, int64_t tokens_per_unit) {
  const auto& m = backbone.manifest();
  if (m.architecture != Architecture::LlavaOnevision)
    return tokens_per_unit * m.vision.spatial_merge_size * m.vision.spatial_merge_size;
  for (const auto& [name, w] : backbone.vision_weights())
    if (name.find("position_embedding") != std::string::npos) return w.size(0);
  throw std::runtime_error(m.vision_file + ": no position_embedding (the floor needs the patch count)");
}

// Bytes of the weights of the vision tower, the text module and every layer; a tensor shared between
// names (tied embeddings and LM head) counted once.
int64_t weights_bytes(const TorchScriptBackbone& backbone) {
  std::vector<std::map<std::string, at::Tensor>> parts{backbone.vision_weights(), backbone.text_weights()};
  for (int64_t i = 0; i < backbone.num_layers(); ++i) parts.push_back(backbone.layer_weights(i));
  std::set<const void*> seen;
  int64_t n = 0;
  for (const auto& part : parts)
    for (const auto& [name, w] : part)
      if (seen.insert(w.storage().data()).second) n += static_cast<int64_t>(w.storage().nbytes());
  return n;
}

// Resident memory a vision call adds, for one unit and then for `vision_memory_frames` frames in one
// call, beside the output features those frames make: a tower that keeps no activations grows by the
// features only. Run first, in a fresh process, so that the allocator holds no freed memory of earlier
// calls to hide either figure. One unit's call goes first and is not counted: TorchScript's executor
// profiles its first calls and optimises the graph on a later one, a one-time cost. Each counted call
// is measured from the process just before it, its frames already made (the caller's input: their int64
// synthesis here briefly took 2-3 x 57 MB for 16 frames, more than the call), to its own peak.
nlohmann::json vision_memory(TorchScriptBackbone& backbone, const StreamBenchOptions& o, int64_t unit, int64_t n_init) {
  nlohmann::json out;
  const int64_t many = std::max(unit, o.vision_memory_frames - o.vision_memory_frames % unit);
  auto call = [&](const Frames& frames, int64_t count) {
    VisualUnitMaker units(backbone, frames);
    const auto made = units.make(0, count, n_init, n_init);
    int64_t feature_bytes = 0;
    for (const auto& u : made) feature_bytes += u.tokens.numel() * static_cast<int64_t>(u.tokens.element_size());
    return feature_bytes;
  };
  call(synthetic_frames(0, unit, backbone.manifest().image, o.fps), unit);  // warm-up, not counted
  bool reset = true;
  for (const int64_t count : {unit, many}) {
    const Frames frames = synthetic_frames(0, count, backbone.manifest().image, o.fps);
    reset = reset_peak_memory() && reset;
    const int64_t before = process_memory().rss_bytes;
    const int64_t feature_bytes = call(frames, count);
    out[std::to_string(count)] = {{"peak_above_before", process_memory().peak_bytes - before},
                                  {"feature_bytes", feature_bytes}};
  }
  out["peak_counts_from"] = reset ? "before the call" : "process start";
  return out;
}

// The keys frame queries see under ReKV's window, as RekvSlidingWindow keeps it: the sinks stay in
// the window until the stream first outgrows n_local, then form their own segment.
struct WindowModel {
  int64_t n_local, n_init, in_window;
  bool separate = false;
  WindowModel(int64_t local, int64_t init) : n_local(local), n_init(init), in_window(init) {}
  int64_t step(int64_t n) {  // keys seen by a frame of n tokens
    if (!separate && in_window + n > n_local) separate = true, in_window -= n_init;
    const int64_t keys = in_window + n + (separate ? n_init : 0);
    in_window = separate ? std::min(n_local, in_window + n) : in_window + n;
    return keys;
  }
  int64_t window_tokens() const { return in_window + (separate ? n_init : 0); }
};

bool is_mukv(const StreamBenchOptions& o) {
  if (o.method != "rekv" && o.method != "mukv" && o.method != "infinipot_v")
    throw std::invalid_argument("--method: expected rekv, mukv or infinipot_v, got " + o.method);
  return o.method == "mukv";
}

// An encoder with what its registration declares it does to memory (answering reads that).
struct BenchEncoder {
  std::unique_ptr<EncodingStrategy> strategy;
  EncoderTraits traits;
};

template <class Strategy, class Options>
BenchEncoder bench_encoder(const std::string& name, const Options& options) {
  return {std::make_unique<Strategy>(options), builtin_encoder_traits(name, options)};
}

BenchEncoder make_encoder(const StreamBenchOptions& o) {
  if (is_mukv(o)) {
    // The harness hands frames over one unit at a time, and `drop` (the default) cuts segments per
    // encode call as the reference does per 64-frame chunk: every segment would be dropped here.
    MukvOptions mukv;
    mukv.segment_leftovers = "carry";
    return bench_encoder<MukvMultigrain>("mukv_multigrain", mukv);
  }
  if (o.method == "infinipot_v") return bench_encoder<InfinipotV>("infinipot_v", InfinipotVOptions{});  // its preset's
  return bench_encoder<RekvSlidingWindow>("rekv_sliding_window", RekvOptions{o.n_local});
}

std::unique_ptr<RetrievalStrategy> make_retrieval(const StreamBenchOptions& o) {
  if (is_mukv(o)) return std::make_unique<MukvRetrieval>(MukvRetrievalOptions{});
  if (o.method == "infinipot_v") return std::make_unique<MemoryAsIs>();
  return std::make_unique<InternalRetrieval>(InternalRetrievalOptions{o.retrieve_size, 1, "dot"});
}

// The counter's operator calls and host synchronisations per phase since its last reset, as JSON.
nlohmann::json phase_counts(const OpCounter& counter, std::initializer_list<OpPhase> phases) {
  nlohmann::json ops, syncs;
  for (const OpPhase p : phases) {
    const OpCounts c = counter.counts(p);
    ops[op_phase_name(p)] = c.ops;
    syncs[op_phase_name(p)] = c.syncs;
  }
  return {{"ops", ops}, {"syncs", syncs}};
}

struct Stream {
  MemoryBank bank;
  BenchEncoder made;
  std::unique_ptr<RetrievalStrategy> retrieval_ptr;
  EncodingStrategy& encoder;
  RetrievalStrategy& retrieval;
  Stream(Backbone& backbone, const StreamBenchOptions& o, const std::vector<int64_t>& sink_ids)
      : bank({backbone.num_layers(), backbone.device(), o.ram_budget_mb < 0 ? -1 : o.ram_budget_mb << 20, o.spill_dir}),
        made(make_encoder(o)),
        retrieval_ptr(make_retrieval(o)),
        encoder(*made.strategy),
        retrieval(*retrieval_ptr) {
    encoder.begin_stream(backbone, sink_ids, bank);
    retrieval.begin_stream();
  }
};

}  // namespace

void check_stream_bench_options(const StreamBenchOptions& o) {
  const auto bounded = [](const char* flag, bool ok, const std::string& range, const std::string& shown) {
    if (!ok) throw std::invalid_argument(std::string("--") + flag + ": expected " + range + ", got " + shown);
  };
  const auto count = [&](const char* flag, int64_t v, int64_t lo, int64_t hi) {
    bounded(flag, v >= lo && v <= hi, std::to_string(lo) + " to " + std::to_string(hi), std::to_string(v));
  };
  is_mukv(o);
  if (!std::regex_match(o.device, std::regex(kDevicePattern)))
    throw std::invalid_argument("--device: expected " + std::string(kDevicePatternDoc) + ", got " + o.device);
  if (!o.dtype.empty() && o.dtype != "float32" && o.dtype != "float16" && o.dtype != "bfloat16")
    throw std::invalid_argument("--dtype: expected float32, float16 or bfloat16 (or none: the export's), got " + o.dtype);
  count("frames", o.frames, 1, 1000000);
  bounded("fps", o.fps > 0 && o.fps <= 1000, "a rate above 0, at most 1000", format_number(o.fps));
  count("n-local", o.n_local, 1, 10000000);
  count("retrieve", o.retrieve_size, 1, 100000);
  for (const int64_t q : o.questions) count("questions", q, 1, 1000000);
  count("ttft-repeats", o.ttft_repeats, 1, 1000);
  count("ram-budget-mb", o.ram_budget_mb, -1, int64_t{1} << 40);
  count("rss-every", o.rss_every, 1, 1000000);
}

nlohmann::json run_stream_bench(const StreamBenchOptions& o) {
  check_stream_bench_options(o);
  c10::InferenceMode inference;
  RuntimeOptions runtime;
  runtime.device = o.device;
  if (!o.dtype.empty()) runtime.dtype = o.dtype;
  const auto t_load = Clock::now();
  TorchScriptBackbone backbone(o.export_dir, runtime_device(runtime),
                               o.dtype.empty() ? std::nullopt : std::optional<at::ScalarType>(runtime_dtype(runtime)));
  const auto& m = backbone.manifest();
  const auto sink_ids = backbone.tokenizer().encode(kSinkPrompt);
  const int64_t n_init = static_cast<int64_t>(sink_ids.size());
  const int64_t question_tokens = static_cast<int64_t>(backbone.tokenizer().encode(kQuestion).size());
  const int64_t prompt_tokens = static_cast<int64_t>(backbone.tokenizer().encode(kAnswerPrompt).size());
  const AnswerOptions answer_options{std::nullopt, 1};  // the encoder's positions; TTFT: the prefill's argmax
  is_mukv(o);
  const bool windowless = o.method != "rekv";  // no ReKV window to model (MuKV, InfiniPot-V)
  const int64_t unit = VisualUnitMaker::frames_per_unit_of(backbone);  // 2 on Qwen2.5-VL: its temporal patch
  for (const int64_t q : o.questions)
    if (q % unit)
      throw std::invalid_argument("--questions " + std::to_string(q) + ": not a multiple of the export's " +
                                  std::to_string(unit) + " frames per visual unit");
  // Read before the stream, so that a missing input fails before the stream runs.
  const int64_t mlp_width = o.floor && !windowless ? intermediate_size(backbone) : 0;

  if (o.vision_memory_frames > 0) return {{"vision_memory", vision_memory(backbone, o, unit, n_init)}};

  // Warm-up: TorchScript profiles and optimises its graphs on the first calls.
  {
    Stream warm(backbone, o, sink_ids);
    for (int64_t f = 0; f < 2 * unit; f += unit) {
      const Frames frame = synthetic_frames(f, unit, m.image, o.fps);
      VisualUnitMaker units(backbone, frame);
      warm.encoder.encode(backbone, units.make(f, unit, n_init, warm.encoder.next_position()), warm.bank);
    }
    (void)answer_question(backbone, warm.encoder, warm.made.traits, warm.bank, warm.retrieval, {"q", kQuestion, 1e9},
                          kAnswerPrompt, answer_options);
  }
  nlohmann::json out;
  out["load_s"] = seconds_since(t_load);
  const ProcessMemory loaded = process_memory();
  const bool peak_reset = reset_peak_memory();

  Stream s(backbone, o, sink_ids);
  WindowModel window(o.n_local, n_init);
  // ATen operator calls and host synchronisations per phase (an atomic increment per call; copies
  // from a device to the host count as synchronisations when the stream runs on one).
  OpCounter counter(!backbone.device().is_cpu());
  nlohmann::json frames = nlohmann::json::array(), questions = nlohmann::json::array(), samples = nlohmann::json::array();
  int64_t tokens_per_unit = 0;
  const auto t_stream = Clock::now();
  for (int64_t f = 0; f + unit <= o.frames; f += unit) {
    auto t0 = Clock::now();
    const Frames frame = synthetic_frames(f, unit, m.image, o.fps);
    counter.reset();
    std::optional<OpPhaseScope> phase(OpPhase::vision);
    VisualUnitMaker units(backbone, frame);
    const auto batch = units.make(f, unit, n_init, s.encoder.next_position());
    const double vision_s = seconds_since(t0);
    tokens_per_unit = batch.front().tokens.size(0);
    phase.emplace(OpPhase::llm);  // the encoder marks its bank's part
    t0 = Clock::now();
    s.encoder.encode(backbone, batch, s.bank);
    const double encode_s = seconds_since(t0);
    phase.reset();
    nlohmann::json row = {{"vision_s", vision_s}, {"encode_s", encode_s},
                          {"counts", phase_counts(counter, {OpPhase::vision, OpPhase::llm, OpPhase::bank})}};
    if (!windowless) {
      const int64_t keys = window.step(tokens_per_unit);
      row["keys"] = keys;
      row["window_full"] = window.separate;
    }
    frames.push_back(row);
    const int64_t done = f + unit;
    if ((o.rss_every > 0 && done % o.rss_every == 0) || done == o.frames) {
      const ProcessMemory now = process_memory();
      const int64_t rss = now.rss_bytes;
      samples.push_back({{"frames", done}, {"stream_s", static_cast<double>(done) / o.fps}, {"rss", rss},
                         {"malloc_live", now.malloc_live_bytes}, {"malloc_heap", now.malloc_heap_bytes},
                         {"bank_ram", s.bank.accounting().ram_bytes}, {"wall_s", seconds_since(t_stream)}});
      std::cerr << "svqa_bench: " << done << "/" << o.frames << " frames, " << encode_s << " s for the last, RSS "
                << (rss >> 20) << " MiB (malloc live " << (now.malloc_live_bytes >> 20) << " MiB, heap "
                << (now.malloc_heap_bytes >> 20) << " MiB)\n";
    }
    if (std::find(o.questions.begin(), o.questions.end(), done) == o.questions.end()) continue;
    Answer best;
    nlohmann::json question_counts;
    for (int r = 0; r < std::max(1, o.ttft_repeats); ++r) {
      counter.reset();
      Answer a = answer_question(backbone, s.encoder, s.made.traits, s.bank, s.retrieval,
                                 {"q", kQuestion, frame.timestamps.back()}, kAnswerPrompt, answer_options);
      if (r == 0 || a.retrieve_seconds + a.prefill_seconds < best.retrieve_seconds + best.prefill_seconds) best = a;
      question_counts =
          phase_counts(counter, {OpPhase::retrieval, OpPhase::gather, OpPhase::prefill, OpPhase::decode, OpPhase::other});
    }
    questions.push_back({{"after_frames", done},
                         {"question_tokens", question_tokens},
                         {"prompt_tokens", prompt_tokens},
                         // what Hugging Face re-prefills for this question: the sinks, every frame, the prompt
                         {"reprefill_tokens", n_init + done / unit * tokens_per_unit + prompt_tokens},
                         {"context_tokens", best.context_tokens.empty() ? 0 : best.context_tokens.front()},
                         {"retrieve_s", best.retrieve_seconds - best.gather_seconds},
                         {"gather_s", best.gather_seconds},
                         {"prefill_s", best.prefill_seconds},
                         {"ttft_s", best.retrieve_seconds + best.prefill_seconds},
                         {"counts", question_counts}});
  }
  const ProcessMemory after = process_memory();
  const auto& acc = s.bank.accounting();
  const int64_t kv_token_bytes = 2 * m.text.num_layers * m.text.num_kv_heads * m.text.head_dim *
                                 static_cast<int64_t>(c10::elementSize(backbone.dtype()));
  out["memory"] = {{"rss_loaded", loaded.rss_bytes},
                   {"weights_bytes", weights_bytes(backbone)},
                   {"peak_rss", after.peak_bytes},
                   {"peak_counts_from", peak_reset ? "loaded" : "process start"},
                   {"bank_bytes", acc.ram_bytes + acc.disk_bytes},
                   {"bank_tokens", acc.tokens},
                   {"bank_ram_bytes", acc.ram_bytes},
                   {"bank_disk_bytes", acc.disk_bytes},
                   {"representative_bytes", acc.representative_bytes},
                   {"window_bytes", windowless ? 0 : window.window_tokens() * kv_token_bytes},
                   {"samples", samples}};
  out["stream_s"] = seconds_since(t_stream);

  if (o.floor && !windowless) {  // the floor models ReKV's window
    const DecoderShape shape{m.text.num_layers, m.text.hidden_size, m.text.num_heads, m.text.num_kv_heads,
                             m.text.head_dim, mlp_width};
    MatmulFloor floor(shape, tokens_per_unit, backbone.dtype(), backbone.device());
    out["peak_flops_per_s"] = floor.peak_flops_per_second();
    for (auto& f : frames) {
      const int64_t keys = f["keys"].get<int64_t>();
      f["floor_s"] = floor.seconds(keys);
      f["flops"] = frame_flops(shape, tokens_per_unit, keys).total();
    }
    // TTFT's floor: the question's retrieval pass (every layer but the last, which only selects)
    // and the prompt's prefill, each attending to its context and itself (the retrieval scores, the
    // last layer's q/k projections and the first token's logits are left out: they are small).
    DecoderShape question_shape = shape;
    question_shape.layers -= 1;
    MatmulFloor question_floor(question_shape, question_tokens, backbone.dtype(), backbone.device());
    MatmulFloor prompt_floor(shape, prompt_tokens, backbone.dtype(), backbone.device());
    for (auto& q : questions) {
      const int64_t context = q["context_tokens"].get<int64_t>();
      q["floor_s"] = question_floor.seconds(context + question_tokens) + prompt_floor.seconds(context + prompt_tokens);
      q["flops"] = frame_flops(question_shape, question_tokens, context + question_tokens).total() +
                   frame_flops(shape, prompt_tokens, context + prompt_tokens).total();
      // Hugging Face's re-prefill of the whole past and the prompt: a causal prefill of L tokens whose
      // i-th query sees i + 1 keys, (L + 1) / 2 on average. The ratio of the two FLOP counts is what
      // TTFT / HF would be if both sides ran at the same FLOP rate, whatever the implementation.
      const int64_t past = q["reprefill_tokens"].get<int64_t>();
      q["hf_flops"] = frame_flops(shape, past, (past + 1) / 2).total();
    }
  }
  if (o.floor) {  // the vision tower's projections for one unit
    const auto shapes = vision_linears(backbone.vision_weights(), vision_patches(backbone, tokens_per_unit),
                                       m.vision.spatial_merge_size);
    out["vision_floor_s"] = linear_floor_seconds(shapes, backbone.dtype(), backbone.device());
    out["vision_flops"] = linear_flops(shapes);
  }
  out["frames"] = frames;
  out["questions"] = questions;
  out["shape"] = {{"layers", m.text.num_layers}, {"hidden", m.text.hidden_size}, {"heads", m.text.num_heads},
                  {"kv_heads", m.text.num_kv_heads}, {"head_dim", m.text.head_dim},
                  {"tokens_per_unit", tokens_per_unit}, {"frames_per_unit", unit}, {"n_init", n_init}};
  out["settings"] = {{"export", o.export_dir}, {"method", o.method}, {"device", o.device}, {"dtype", c10::toString(backbone.dtype())},
                     {"threads", at::get_num_threads()}, {"frames", o.frames}, {"fps", o.fps},
                     {"n_local", o.n_local}, {"retrieve_size", o.retrieve_size},
                     {"ram_budget_mb", o.ram_budget_mb}, {"questions", o.questions}};
  return out;
}

}  // namespace svqa
