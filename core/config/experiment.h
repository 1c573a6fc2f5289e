#pragma once
// An experiment file resolved and validated against the schemas: what `svqa validate` checks
// and `svqa run` executes.
//
//   name: demo
//   runtime: {device: cpu, dtype: float32, threads: 2}
//   backbone:  {type: <registered backbone>, options: {...}}
//   encoding:  {type: <registered encoding strategy>, options: {...}}
//   retrieval: {type: <registered retrieval strategy>, options: {...}}
//   benchmark: {type: <registered benchmark>, options: {...}}
//   output: {dir: results}

#include <any>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/config/config_node.h"
#include "core/config/expected_result.h"
#include "core/config/grid.h"
#include "core/config/registry.h"
#include "core/config/runtime.h"

namespace svqa {

struct OutputOptions {
  std::string dir = "results";
  static void declare(Schema<OutputOptions>& s) {
    s.field("dir", &OutputOptions::dir, "root directory of result folders (svqa run --out overrides it)");
  }
};

// How streams are fed to the encoder and questions answered (the runner's own settings).
struct StreamOptions {
  double fps = 0.5;
  std::string frames_before_question = "exclusive";
  std::string frame_step = "reference";
  std::string frame_times = "presented";
  int64_t chunk_frames = 64;
  std::string sink_prompt = "<default>";
  std::string answer_prompt = "<default>";
  std::string position_policy = "encoder";
  int64_t max_new_tokens = 0;
  bool record_logits = false;
  int64_t ram_budget_mb = -1;
  std::string spill_dir;
  std::string protocol = "streaming";
  int64_t min_video_frames = 0;
  double context_window_s = 0;
  std::string kv_codec = "identity";
  int64_t kv_codec_group = 32;
  // Memory snapshots hold K/V as the model gives them, so they replay only a bank that does not code them.
  bool snapshots_can_replay() const { return kv_codec == "identity"; }
  static void declare(Schema<StreamOptions>& s) {
    declare_frames(s);
    declare_answer(s);
    declare_memory(s);
    declare_protocol(s);
  }

 private:
  // Which frames of a video are encoded, and how many at a time.
  static void declare_frames(Schema<StreamOptions>& s) {
    s.field("fps", &StreamOptions::fps, "frames sampled per second of video (ReKV: 0.5)").min(1e-6)
        .max(1000);
    s.field("frames_before_question", &StreamOptions::frames_before_question,
            "exclusive: a question at t sees sampled frames [0, int(t*fps)) (the reference code's rule: ReKV, MuKV, "
            "StreamKV); inclusive: every frame stamped at or before t")
        .one_of({"exclusive", "inclusive"});
    s.field("frame_step", &StreamOptions::frame_step,
            "which frames of a video frame_times: stride keeps: reference: every int(round(avg_fps) / fps)-th (ReKV "
            "video_qa/base.py); nearest: every round(avg_fps / fps)-th (differs at e.g. 12.5 fps); qwen_smart: "
            "qwen-vl-utils' smart_nframes indices over the whole video (under either frame_times)")
        .one_of({"reference", "nearest", "qwen_smart"});
    s.field("frame_times", &StreamOptions::frame_times,
            "which frames of a video file are kept and the time each goes by: presented: the first frame shown at "
            "or after each k/fps, at its presentation time (PTS); stride: every frame_step-th frame, at index / "
            "avg_fps (ReKV's rule; early on variable-rate files: records state future_s)")
        .one_of({"presented", "stride"});
    s.field("chunk_frames", &StreamOptions::chunk_frames,
            "frames run through the vision tower and handed to the encoder at a time (ReKV: 64)")
        .min(1)
        .max(4096);
  }

  // How a question is put to the model and its answer recorded.
  static void declare_answer(Schema<StreamOptions>& s) {
    s.field("sink_prompt", &StreamOptions::sink_prompt,
            "text prefilled before the video as attention sinks; <default>: the backbone's chat template up to the video");
    s.field("answer_prompt", &StreamOptions::answer_prompt,
            "text after the retrieved video, with {question}; <default>: the rest of the backbone's chat template");
    s.field("position_policy", &StreamOptions::position_policy,
            "encoder: the encoding strategy's own; contiguous: retrieved blocks back to back in time order (ReKV); "
            "original: encode positions kept, the question after the stream; stacked: encode positions kept in "
            "retrieval's order, the question after the context's length (MuKV's reference code)")
        .one_of({"encoder", "contiguous", "original", "stacked"});
    s.field("max_new_tokens", &StreamOptions::max_new_tokens,
            "greedy decoding limit; 0: by question kind as ReKV's code (16 multiple choice, 256 streaming "
            "open-ended, 1024 offline open-ended); at most 4096, so a run always ends")
        .min(0)
        .max(4096);
    s.field("record_logits", &StreamOptions::record_logits,
            "write the first answer token's logits (float32, one per vocabulary entry) in each record's "
            "extra.first_token_logits, so runs can be compared by logits, not only ids");
    s.check("answer_prompt", [](const StreamOptions& o) {
      return o.answer_prompt == "<default>" || o.answer_prompt.find("{question}") != std::string::npos
                 ? std::string()
                 : "must contain {question} (where the question goes), or be <default>";
    });
  }

  // Where K/V memory goes once past the RAM budget.
  static void declare_memory(Schema<StreamOptions>& s) {
    s.field("ram_budget_mb", &StreamOptions::ram_budget_mb,
            "resident K/V memory before blocks spill to disk, MiB; -1: never spill")
        .min(-1)
        .max(1 << 30);
    s.field("spill_dir", &StreamOptions::spill_dir, "where spilled blocks go (each run in its own subfolder); empty: <results dir>/spill");
  }

  // How questions share a stream's memory, which streams are skipped, and how K/V is stored.
  static void declare_protocol(Schema<StreamOptions>& s) {
    s.field("protocol", &StreamOptions::protocol,
            "streaming: encode each stream once, questions in time order; reencode_per_question: a fresh memory "
            "encoded from frame 0 for every question (StreamKV's reference protocol, O(questions × length))")
        .one_of({"streaming", "reencode_per_question"});
    s.field("min_video_frames", &StreamOptions::min_video_frames,
            "a stream whose video has fewer sampled frames (as the source states them) is skipped, each of its "
            "questions an error record saying so (MuKV's reference skips videos under 15); 0: none skipped")
        .min(0)
        .max(1000000);
    s.field("context_window_s", &StreamOptions::context_window_s,
            "StreamingBench's --context_time: a question at t may use only memory inside [t - w, t] (blocks "
            "starting at or after t - w; fresh_frames: frames from there on); the leaderboard's main table uses "
            "60; 0: the whole past")
        .min(0)
        .max(86400);
    s.field("kv_codec", &StreamOptions::kv_codec,
            "how the memory bank stores K/V (core/memory/kv_codec.h): identity: as the model gives them; int8 / int4: "
            "quantised in groups of kv_codec_group tokens per channel with a float32 scale and minimum each "
            "(StreamingTOM's OQM), decoded when read; RAM, disk and the records' bytes are the coded ones")
        .one_of({"identity", "int8", "int4"});
    // At most core/memory/kv_codec.h's kMaxKvCodecGroup (why: there; a test checks the two agree).
    s.field("kv_codec_group", &StreamOptions::kv_codec_group,
            "tokens per quantisation group of kv_codec, 1 to 1024 (StreamingTOM: 50, one frame's kept tokens; "
            "KIVI: 32 to 128); a block's last group may be partial")
        .min(1)
        .max(1024);
  }
};

// Where streams' encoded memories are kept for reuse (docs/experiments.md, "Memory snapshots").
struct MemoryOptions {
  std::string cache;  // empty: off
  double max_gb = 0;  // 0: unbounded
  double wait_s = 600;
  static void declare(Schema<MemoryOptions>& s) {
    s.field("cache", &MemoryOptions::cache,
            "folder of memory snapshots: a stream whose encoding (export, encoding section, frames, questions' "
            "times, ...) matches one there is answered from it instead of being encoded, else its encoding is "
            "saved there; runs sharing it (a grid's) encode each stream once; empty: off")
        .matches(R"([^\x00-\x1f\x7f]{0,4096})", "a folder path: at most 4096 bytes, no control characters");
    s.field("max_gb", &MemoryOptions::max_gb,
            "size bound of the cache in GB (10^9 bytes): after a snapshot is saved, the least recently used others "
            "are removed until the cache fits; 0: unbounded (svqa cache gc bounds it by hand)")
        .min(0)
        .max(1e6);
    s.field("wait_s", &MemoryOptions::wait_s,
            "while another process encodes a stream into the cache (svqa encode, a grid's other shard), a run "
            "answers from its snapshot as it is written, waiting for the calls up to each question; the longest it "
            "waits for the writer's next record before encoding the stream itself (not saved); 0: never waits")
        .min(0)
        .max(86400);
  }
};

// The LLM judge of open-ended answers (RVS): any OpenAI-compatible chat-completions endpoint,
// asked with the Video-ChatGPT yes/no + 0-5 prompt (benchmarks/scoring/llm_judge.h). Off while no base
// URL is given here or in $OPENAI_BASE_URL. The key is never written in a config file: it is read
// from the environment variable named by api_key_env.
struct JudgeOptions {
  std::string base_url;  // e.g. https://api.openai.com/v1; empty: $OPENAI_BASE_URL; neither: no judging
  std::string model;     // empty: $SVQA_JUDGE_MODEL
  std::string api_key_env = "OPENAI_API_KEY";
  double timeout_s = 60;
  int64_t max_attempts = 3;
  double backoff_s = 2;
  std::string cache;  // JSON Lines of judgments; empty: judge_cache.jsonl beside the run directory
  static void declare(Schema<JudgeOptions>& s) {
    s.field("base_url", &JudgeOptions::base_url,
            "OpenAI-compatible API root (…/v1); empty: $OPENAI_BASE_URL; neither: open-ended answers are not judged");
    s.field("model", &JudgeOptions::model,
            "judge model, e.g. gpt-3.5-turbo-0125; empty: $SVQA_JUDGE_MODEL (numbers move with it: never compare across judges)");
    s.field("api_key_env", &JudgeOptions::api_key_env, "environment variable holding the API key (may be unset for local servers)");
    s.field("timeout_s", &JudgeOptions::timeout_s, "seconds one request may take").min(0.001)
        .max(3600);
    s.field("max_attempts", &JudgeOptions::max_attempts,
            "tries per question (failed or unparseable replies); then it is counted as failed").min(1)
        .max(10);
    s.field("backoff_s", &JudgeOptions::backoff_s, "wait before the 2nd try, doubled before each next one").min(0)
        .max(60);
    s.field("cache", &JudgeOptions::cache,
            "judgments cached by (question, answer, prediction, model); empty: judge_cache.jsonl beside the run's "
            "directory (the results root; a grid's folder, shared by its runs)");
  }
};

// The scalar part of an experiment; component sections are validated through the registries.
struct ExperimentHeader {
  std::string name;
  std::string description;
  std::string label;  // the display name of the method in reports' tables and figures ("ReKV", "MuKV (paper)")
  RuntimeOptions runtime;
  OutputOptions output;
  StreamOptions stream;
  JudgeOptions judge;
  MemoryOptions memory;
  static void declare(Schema<ExperimentHeader>& s) {
    s.field("name", &ExperimentHeader::name, "experiment name, the results folder's; defaults to the file name without .yaml")
        .matches(R"((?!\.\.?$)[^/\\\x00-\x1f\x7f]{1,200})",
                 "a folder name: 1 to 200 bytes, no '/', '\\' or control characters, not '.' or '..'");
    s.field("description", &ExperimentHeader::description, "free text shown in reports");
    s.field("label", &ExperimentHeader::label,
            "the method's display name in `svqa report` tables and figures (default: '<encoding> + <retrieval>')")
        .matches(R"([^\x00-\x1f\x7f]{0,80})", "at most 80 bytes, no control characters");
    s.field("runtime", &ExperimentHeader::runtime, "device, dtype, threads, seed");
    s.field("output", &ExperimentHeader::output, "where results go");
    s.field("stream", &ExperimentHeader::stream, "frame sampling, prompts, positions, decoding, memory tiers");
    s.field("judge", &ExperimentHeader::judge, "LLM judge of open-ended answers (RVS)");
    s.field("memory", &ExperimentHeader::memory, "memory snapshots: encode a stream once, answer many runs from it");
    s.check("memory", [](const ExperimentHeader& h) {
      return h.memory.cache.empty() || h.stream.snapshots_can_replay()
                 ? std::string()
                 : "cache: memory snapshots keep K/V as the model gives them, so they cannot replay stream.kv_codec: " +
                       h.stream.kv_codec + "; leave memory.cache empty or use kv_codec: identity";
    });
  }
};

struct ComponentChoice {
  std::string type;     // registered name
  std::any options;     // the entry's options struct, validated
};

struct ExperimentConfig {
  ExperimentHeader header;
  std::map<std::string, ComponentChoice> components;  // by section: backbone, encoding, ...
  std::optional<ExpectedResult> expected;             // the paper's figure, when `expected:` is set
  ConfigNode resolved;                                // after _base_, merge and --set: what the files set
  // `resolved` with every value the run uses, defaults included (schema_defaults.h): what
  // `svqa validate --dump` prints and a run folder's config.yaml records.
  ConfigNode complete;
  const ComponentChoice* component(const std::string& section) const;
};

// One pair of entries under a section rule (registry.h's SectionRule), with default options.
struct SectionPair {
  std::string section, type, other_section, other_type;
  std::string problem;  // "" when they fit
};
// Every pair every rule relates, for `svqa list`: e.g. each retrieval strategy with each encoder.
std::vector<SectionPair> section_pairs(const RegistrySections& registries);

// load_config + overrides + validation; throws ConfigError listing every problem.
ExperimentConfig resolve_experiment(const std::string& path, const std::vector<std::string>& overrides,
                                    const RegistrySections& registries);

// Validates an already-merged tree (`origin` names the file for the default experiment name).
ExperimentConfig validate_experiment(ConfigNode root, const std::string& origin, const RegistrySections& registries);

// The grid's pre-check: every run validated before any starts, so a problem in the last run fails
// now, not in hours. Throws one ConfigError with every problem of every run, each line once,
// ending " (run NAME)" or " (runs A, B, ...)".
std::vector<ExperimentConfig> validate_grid_runs(const std::vector<GridRun>& runs, const std::string& origin,
                                                 const RegistrySections& registries);

}  // namespace svqa
