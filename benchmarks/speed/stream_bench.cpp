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

#include "benchmarks/speed/export_measures.h"
#include "benchmarks/speed/matmul_floor.h"
#include "benchmarks/speed/process_memory.h"
#include "benchmarks/speed/vision_floor.h"
#include "core/config/runtime.h"
#include "core/config/schema.h"
#include "core/nn/large_allocations.h"
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

// The harness's prompts on the export's tokenizer, and the frames per visual unit.
struct BenchPrompts {
  std::vector<int64_t> sink_ids;
  int64_t n_init = 0, question_tokens = 0, prompt_tokens = 0;
  int64_t unit = 1;  // frames per visual unit: 2 on Qwen2.5-VL (its temporal patch)
};

BenchPrompts bench_prompts(const TorchScriptBackbone& backbone, const StreamBenchOptions& o) {
  BenchPrompts p;
  p.sink_ids = backbone.tokenizer().encode(kSinkPrompt);
  p.n_init = static_cast<int64_t>(p.sink_ids.size());
  p.question_tokens = static_cast<int64_t>(backbone.tokenizer().encode(kQuestion).size());
  p.prompt_tokens = static_cast<int64_t>(backbone.tokenizer().encode(kAnswerPrompt).size());
  p.unit = VisualUnitMaker::frames_per_unit_of(backbone);
  for (const int64_t q : o.questions)
    if (q % p.unit)
      throw std::invalid_argument("--questions " + std::to_string(q) + ": not a multiple of the export's " +
                                  std::to_string(p.unit) + " frames per visual unit");
  return p;
}

const AnswerOptions kAnswerOptions{std::nullopt, 1};  // the encoder's positions; TTFT: the prefill's argmax

// TorchScript profiles and optimises its graphs on the first calls: two units and a question, not measured.
void warm_up(TorchScriptBackbone& backbone, const StreamBenchOptions& o, const BenchPrompts& p) {
  Stream warm(backbone, o, p.sink_ids);
  for (int64_t f = 0; f < 2 * p.unit; f += p.unit) {
    const Frames frame = synthetic_frames(f, p.unit, backbone.manifest().image, o.fps);
    VisualUnitMaker units(backbone, frame);
    warm.encoder.encode(backbone, units.make(f, p.unit, p.n_init, warm.encoder.next_position()), warm.bank);
  }
  (void)answer_question(backbone, warm.encoder, warm.made.traits, warm.bank, warm.retrieval, {"q", kQuestion, 1e9}, kAnswerPrompt,
                        kAnswerOptions);
}

// The measured stream: each unit through the vision tower and the encoder, resident memory sampled,
// and the question asked after each of --questions frames.
class MeasuredStream {
 public:
  MeasuredStream(TorchScriptBackbone& backbone, const StreamBenchOptions& o, const BenchPrompts& p)
      : backbone_(backbone),
        o_(o),
        p_(p),
        windowless_(o.method != "rekv"),  // no ReKV window to model (MuKV, InfiniPot-V)
        s_(backbone, o, p.sink_ids),
        window_(o.n_local, p.n_init),
        // ATen operator calls and host synchronisations per phase (an atomic increment per call; copies
        // from a device to the host count as synchronisations when the stream runs on one).
        counter_(!backbone.device().is_cpu()) {}

  void run() {
    for (int64_t f = 0; f + p_.unit <= o_.frames; f += p_.unit) {
      Frames frame;
      const double encode_s = encode_unit(f, frame);
      const int64_t done = f + p_.unit;
      if ((o_.rss_every > 0 && done % o_.rss_every == 0) || done == o_.frames) sample_memory(done, encode_s);
      if (std::find(o_.questions.begin(), o_.questions.end(), done) != o_.questions.end())
        ask(done, frame.timestamps.back());
    }
  }

  // The bank and the process's memory at the end of the stream.
  nlohmann::json memory(const ProcessMemory& loaded, bool peak_reset) const {
    const ProcessMemory after = process_memory();
    const auto& acc = s_.bank.accounting();
    const auto& t = backbone_.manifest().text;
    const int64_t kv_token_bytes =
        2 * t.num_layers * t.num_kv_heads * t.head_dim * static_cast<int64_t>(c10::elementSize(backbone_.dtype()));
    return {{"rss_loaded", loaded.rss_bytes},
            {"weights_bytes", weights_bytes(backbone_)},
            {"peak_rss", after.peak_bytes},
            {"peak_counts_from", peak_reset ? "loaded" : "process start"},
            {"bank_bytes", acc.ram_bytes + acc.disk_bytes},
            {"bank_tokens", acc.tokens},
            {"bank_ram_bytes", acc.ram_bytes},
            {"bank_disk_bytes", acc.disk_bytes},
            {"representative_bytes", acc.representative_bytes},
            {"window_bytes", windowless_ ? 0 : window_.window_tokens() * kv_token_bytes},
            {"samples", samples_}};
  }

  bool windowless() const { return windowless_; }
  nlohmann::json frames = nlohmann::json::array(), questions = nlohmann::json::array();
  int64_t tokens_per_unit = 0;
  const Clock::time_point started = Clock::now();

 private:
  // Frames [f, f + unit): made, through the vision tower, then the encoder; their row in `frames`.
  double encode_unit(int64_t f, Frames& frame) {
    auto t0 = Clock::now();
    frame = synthetic_frames(f, p_.unit, backbone_.manifest().image, o_.fps);
    counter_.reset();
    std::optional<OpPhaseScope> phase(OpPhase::vision);
    VisualUnitMaker units(backbone_, frame);
    const auto batch = units.make(f, p_.unit, p_.n_init, s_.encoder.next_position());
    const double vision_s = seconds_since(t0);
    tokens_per_unit = batch.front().tokens.size(0);
    phase.emplace(OpPhase::llm);  // the encoder marks its bank's part
    t0 = Clock::now();
    s_.encoder.encode(backbone_, batch, s_.bank);
    const double encode_s = seconds_since(t0);
    phase.reset();
    nlohmann::json row = {{"vision_s", vision_s}, {"encode_s", encode_s},
                          {"counts", phase_counts(counter_, {OpPhase::vision, OpPhase::llm, OpPhase::bank})}};
    if (!windowless_) {
      const int64_t keys = window_.step(tokens_per_unit);
      row["keys"] = keys;
      row["window_full"] = window_.separate;
    }
    frames.push_back(row);
    return encode_s;
  }

  void sample_memory(int64_t done, double encode_s) {
    const ProcessMemory now = process_memory();
    const int64_t rss = now.rss_bytes;
    samples_.push_back({{"frames", done}, {"stream_s", static_cast<double>(done) / o_.fps}, {"rss", rss},
                        {"malloc_live", now.malloc_live_bytes}, {"malloc_heap", now.malloc_heap_bytes},
                        {"bank_ram", s_.bank.accounting().ram_bytes}, {"wall_s", seconds_since(started)}});
    std::cerr << "svqa_bench: " << done << "/" << o_.frames << " frames, " << encode_s << " s for the last, RSS "
              << (rss >> 20) << " MiB (malloc live " << (now.malloc_live_bytes >> 20) << " MiB, heap "
              << (now.malloc_heap_bytes >> 20) << " MiB)\n";
  }

  // The question after `done` frames, --ttft-repeats times: the fastest answer's times and counts.
  void ask(int64_t done, double time) {
    Answer best;
    nlohmann::json question_counts;
    for (int r = 0; r < std::max(1, o_.ttft_repeats); ++r) {
      counter_.reset();
      Answer a = answer_question(backbone_, s_.encoder, s_.made.traits, s_.bank, s_.retrieval, {"q", kQuestion, time}, kAnswerPrompt,
                                 kAnswerOptions);
      if (r == 0 || a.retrieve_seconds + a.prefill_seconds < best.retrieve_seconds + best.prefill_seconds) best = a;
      question_counts =
          phase_counts(counter_, {OpPhase::retrieval, OpPhase::gather, OpPhase::prefill, OpPhase::decode, OpPhase::other});
    }
    questions.push_back({{"after_frames", done},
                         {"question_tokens", p_.question_tokens},
                         {"prompt_tokens", p_.prompt_tokens},
                         // what Hugging Face re-prefills for this question: the sinks, every frame, the prompt
                         {"reprefill_tokens", p_.n_init + done / p_.unit * tokens_per_unit + p_.prompt_tokens},
                         {"context_tokens", best.context_tokens.empty() ? 0 : best.context_tokens.front()},
                         {"retrieve_s", best.retrieve_seconds - best.gather_seconds},
                         {"gather_s", best.gather_seconds},
                         {"prefill_s", best.prefill_seconds},
                         {"ttft_s", best.retrieve_seconds + best.prefill_seconds},
                         {"counts", question_counts}});
  }

  TorchScriptBackbone& backbone_;
  const StreamBenchOptions& o_;
  const BenchPrompts& p_;
  const bool windowless_;
  Stream s_;
  WindowModel window_;
  OpCounter counter_;
  nlohmann::json samples_ = nlohmann::json::array();
};

// The matmul floor of ReKV's window: each frame's at the keys it saw, each question's retrieval pass
// and prompt prefill, and Hugging Face's re-prefill in FLOPs.
void add_window_floor(nlohmann::json& out, MeasuredStream& stream, const TorchScriptBackbone& backbone,
                      const BenchPrompts& p, int64_t mlp_width, double peak_before) {
  const auto& t = backbone.manifest().text;
  const DecoderShape shape{t.num_layers, t.hidden_size, t.num_heads, t.num_kv_heads, t.head_dim, mlp_width};
  MatmulFloor floor(shape, stream.tokens_per_unit, backbone.dtype(), backbone.device());
  // The faster of the peaks before and after the stream: a drifting machine never flatters a ratio.
  out["peak_flops_per_s"] = std::max(peak_before, floor.peak_flops_per_second());
  for (auto& f : stream.frames) {
    const int64_t keys = f["keys"].get<int64_t>();
    f["floor_s"] = floor.seconds(keys);
    f["flops"] = frame_flops(shape, stream.tokens_per_unit, keys).total();
  }
  // TTFT's floor: the question's retrieval pass (every layer but the last, which only selects)
  // and the prompt's prefill, each attending to its context and itself (the retrieval scores, the
  // last layer's q/k projections and the first token's logits are left out: they are small).
  DecoderShape question_shape = shape;
  question_shape.layers -= 1;
  MatmulFloor question_floor(question_shape, p.question_tokens, backbone.dtype(), backbone.device());
  MatmulFloor prompt_floor(shape, p.prompt_tokens, backbone.dtype(), backbone.device());
  for (auto& q : stream.questions) {
    const int64_t context = q["context_tokens"].get<int64_t>();
    q["floor_s"] = question_floor.seconds(context + p.question_tokens) + prompt_floor.seconds(context + p.prompt_tokens);
    q["flops"] = frame_flops(question_shape, p.question_tokens, context + p.question_tokens).total() +
                 frame_flops(shape, p.prompt_tokens, context + p.prompt_tokens).total();
    // Hugging Face's re-prefill of the whole past and the prompt: a causal prefill of L tokens whose
    // i-th query sees i + 1 keys, (L + 1) / 2 on average. The ratio of the two FLOP counts is what
    // TTFT / HF would be if both sides ran at the same FLOP rate, whatever the implementation.
    const int64_t past = q["reprefill_tokens"].get<int64_t>();
    q["hf_flops"] = frame_flops(shape, past, (past + 1) / 2).total();
  }
}

// The model's shape and the run's settings, as the report shows them.
void add_shape_and_settings(nlohmann::json& out, const TorchScriptBackbone& backbone, const StreamBenchOptions& o,
                            const BenchPrompts& p, int64_t tokens_per_unit) {
  const auto& t = backbone.manifest().text;
  out["shape"] = {{"layers", t.num_layers}, {"hidden", t.hidden_size}, {"heads", t.num_heads},
                  {"kv_heads", t.num_kv_heads}, {"head_dim", t.head_dim},
                  {"tokens_per_unit", tokens_per_unit}, {"frames_per_unit", p.unit}, {"n_init", p.n_init}};
  out["settings"] = {{"export", o.export_dir}, {"method", o.method}, {"device", o.device}, {"dtype", c10::toString(backbone.dtype())},
                     {"threads", at::get_num_threads()}, {"frames", o.frames}, {"fps", o.fps},
                     {"n_local", o.n_local}, {"retrieve_size", o.retrieve_size},
                     {"ram_budget_mb", o.ram_budget_mb}, {"questions", o.questions},
                     {"malloc", jemalloc_linked() ? "jemalloc" : "glibc"}};
}

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
  const BenchPrompts p = bench_prompts(backbone, o);
  const bool windowless = o.method != "rekv";  // no ReKV window to model (MuKV, InfiniPot-V)
  // Read before the stream, so that a missing input fails before the stream runs.
  const int64_t mlp_width = o.floor && !windowless ? intermediate_size(backbone) : 0;

  if (o.vision_memory_frames > 0) return {{"vision_memory", vision_memory(backbone, o, p.unit, p.n_init)}};

  warm_up(backbone, o, p);
  const double peak_before = o.floor && !windowless ? matmul_peak_flops(backbone.dtype(), backbone.device()) : 0;
  nlohmann::json out;
  out["load_s"] = seconds_since(t_load);
  const ProcessMemory loaded = process_memory();
  const bool peak_reset = reset_peak_memory();

  MeasuredStream stream(backbone, o, p);
  stream.run();
  out["memory"] = stream.memory(loaded, peak_reset);
  out["stream_s"] = seconds_since(stream.started);

  if (o.floor && !windowless) add_window_floor(out, stream, backbone, p, mlp_width, peak_before);  // the floor models ReKV's window
  if (o.floor) {  // the vision tower's projections for one unit
    const auto& m = backbone.manifest();
    const auto shapes = vision_linears(backbone.vision_weights(), vision_patches(backbone, stream.tokens_per_unit),
                                       m.vision.spatial_merge_size);
    out["vision_floor_s"] = linear_floor_seconds(shapes, backbone.dtype(), backbone.device());
    out["vision_flops"] = linear_flops(shapes);
  }
  out["frames"] = stream.frames;
  out["questions"] = stream.questions;
  add_shape_and_settings(out, backbone, o, p, stream.tokens_per_unit);
  return out;
}

}  // namespace svqa
