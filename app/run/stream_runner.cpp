#include "app/run/stream_runner.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <memory>
#include <optional>

#include "engine/benchmark.h"
#include "engine/declared_reads.h"
#include "core/io/format.h"
#include "core/io/safe_paths.h"
#include "app/run/frame_supply.h"
#include "app/run/prediction_log.h"
#include "app/run/proactive_polling.h"
#include "app/run/progress.h"
#include "app/run/question_step.h"
#include "app/run/run_closing.h"
#include "app/run/run_folder.h"
#include "engine/snapshot/followed_snapshot.h"
#include "engine/snapshot/snapshot_streams.h"
#include "app/run/stream_encoding.h"
#include "models/backbones/backbone.h"

namespace svqa {
namespace {

struct Prompts {
  std::vector<int64_t> sink_ids;
  std::string answer;  // with {question}
};

Prompts prompts_for(const StreamOptions& o, Backbone& backbone) {
  const auto& tpl = backbone.manifest().video_prompt;
  const size_t video = tpl.find("{video}");
  Prompts p;
  p.sink_ids = backbone.tokenizer().encode(o.sink_prompt == "<default>" ? tpl.substr(0, video) : o.sink_prompt);
  p.answer = o.answer_prompt == "<default>" ? tpl.substr(video + 7) : o.answer_prompt;
  if (p.answer.find("{question}") == std::string::npos)
    throw std::invalid_argument("stream.answer_prompt: must contain {question}");
  return p;
}

// stream.position_policy: `encoder` leaves the choice to the encoding strategy.
std::optional<PositionPolicy> answer_policy(const std::string& name) {
  if (name == "encoder") return std::nullopt;
  return position_policy_from_name(name);
}

void note_tiny_model(const Backbone& backbone, std::ostream& log) {
  if (backbone.manifest().source.rfind("tiny:", 0) != 0) return;
  log << "note: " << backbone.manifest().dir << " is a tiny model with RANDOM weights: its answers are noise; "
      << "everything around it is the real pipeline. With a real checkpoint (docs/backbones.md):\n"
      << "  .venv/bin/python -m models.export --model ~/hf/llava-onevision-qwen2-0.5b-ov-hf --dtype bfloat16 "
         "--out exports/llava-ov-0.5b\n"
      << "  build/bin/svqa run experiments/demo.yaml --set backbone.options.export=exports/llava-ov-0.5b "
         "--set runtime.dtype=bfloat16 --set encoding.options.n_local=15000 --set retrieval.options.retrieve_size=64\n";
}

// The streams `part` takes (all without one), in the benchmark's order.
std::vector<Stream> streams_of(std::vector<Stream> all, const RunPart* part) {
  if (!part) return all;
  std::vector<Stream> mine;
  for (size_t i = 0; i < all.size(); ++i)
    if (part->takes_stream(i)) mine.push_back(std::move(all[i]));
  return mine;
}

// Where stdout is not a terminal, at most one progress line per this many seconds (so at least one a
// minute while a stream is encoded, even when another line took the last slot).
constexpr double kProgressLineSeconds = 20;

// `streams`, their proactive questions' poll counts checked (before the model loads).
std::vector<Stream> polls_checked(std::vector<Stream> streams, std::ostream& log) {
  check_poll_counts(streams, log);
  return streams;
}

// One run: the components made from the experiment, then each stream in turn.
class StreamRunner {
 public:
  // `encode_only` (svqa encode): each stream's memory encoded into the memory cache, the encoder
  // told of each question as a run tells it, nothing answered or recorded.
  StreamRunner(const ExperimentConfig& cfg, const Registries& registries, const std::string& dir, std::ostream& log,
               bool live_progress, bool encode_only = false, const RunPart* part = nullptr)
      : encode_only_(encode_only),
        closes_run_(!part),
        cfg_(cfg),
        dir_(dir),
        log_(log),
        live_progress_(live_progress),
        // The annotations first: a bad file (a repeated question id, ...) fails before the model loads.
        benchmark_(registries.benchmark.create(component("benchmark").type, component("benchmark").options)),
        streams_(polls_checked(streams_of(benchmark_->streams(), part), log)),
        // Each given only the runtime leaves it declares: the memory cache keys on those (declared_reads.h).
        backbone_(registries.backbone.create(component("backbone").type, component("backbone").options,
                                             runtime_for(cfg, registries.sections(), "backbone"))),
        encoder_(registries.encoding.create(component("encoding").type, component("encoding").options,
                                            runtime_for(cfg, registries.sections(), "encoding"))),
        traits_(encoder_traits(cfg, registries.sections())),
        retrieval_(registries.retrieval.create(component("retrieval").type, component("retrieval").options,
                                               cfg.header.runtime)),
        prompts_(prompts_for(cfg.header.stream, *backbone_)),
        predictions_(part ? part->records : dir + "/predictions.jsonl"),
        judge_(make_run_judge(cfg.header.judge, streams_, dir)),
        snapshots_(cfg, registries.sections(), dir, log) {}

  RunOutcome run() {
    if (encode_only_) {
      note_tiny_model(*backbone_, log_);
      for (const auto& stream : streams_) run_stream(stream);
      return {};
    }
    int64_t skipped = 0;
    for (const auto& s : streams_)
      for (const auto& q : s.questions) totals_.questions += 1, skipped += predictions_.done(s.id, q.id);
    note_tiny_model(*backbone_, log_);
    log_ << cfg_.header.name << ": " << streams_.size() << " streams, " << totals_.questions << " questions"
         << (skipped ? " (" + std::to_string(skipped) + " already answered: resuming)" : std::string()) << std::endl;
    progress_ = std::make_unique<Progress>(totals_.questions, skipped);
    for (const auto& stream : streams_) run_stream(stream);
    if (!closes_run_ || outcome_.faults) return outcome_;  // a run with faults is closed by the rerun that answers them

    std::vector<std::string> left_out;
    const std::vector<PredictionRecord> records = asked_records(streams_, predictions_.records(), left_out);
    log_left_out(left_out, log_);
    write_metrics(dir_, cfg_.header.name, totals_, records);
    write_scores(dir_, component("benchmark").type, *benchmark_, streams_, records, judge_, log_);
    print_run_table(records, log_);
    return outcome_;
  }

 private:
  const ComponentChoice& component(const char* section) const { return *cfg_.component(section); }

  // The stream from its memory snapshot where one fits, else encoded (and saved when the cache is
  // on); a snapshot found damaged while answering is dropped and the rest of the stream encoded.
  // A snapshot being written by another process whose writer died or stalled: the stream encoded
  // here (saved when the writer died before this run answered from it).
  void run_stream(const Stream& stream) {
    for (bool use_cache = true;;) {
      try {
        run_stream(stream, use_cache);
        return;
      } catch (const SnapshotWriterGone& e) {
        log_ << "  memory cache: " << e.what() << "\n";
        use_cache = e.died();  // its lock is free: this run may take it; else the writer still holds it
      } catch (const EnvironmentError& e) {
        if (!snapshots_.drop_if_damaged(e)) throw;
        use_cache = false;
      }
    }
  }

  // Every question of `stream` not yet answered, in the order they are asked, encoding up to each.
  void run_stream(const Stream& stream, bool use_cache) {
    std::vector<Question> questions = stream.questions;
    std::stable_sort(questions.begin(), questions.end(), [](const Question& a, const Question& b) { return a.time < b.time; });
    auto done = [&](const Question& q) { return predictions_.done(stream.id, q.id); };
    if (std::all_of(questions.begin(), questions.end(), done)) return;
    std::unique_ptr<FrameReader> frames = open_frames(stream, questions);
    if (!frames) return;
    const bool untouched = std::none_of(questions.begin(), questions.end(), done);
    // Proactive polls tell the encoder of every poll: their memory is not saved (a snapshot's log
    // holds a question's calls, not a poll's).
    const bool polled = std::any_of(questions.begin(), questions.end(), [](const Question& q) { return !q.poll_times.empty(); });
    const auto snapshot = use_cache && untouched && !polled
                              ? snapshots_.open(stream, questions, prompts_.sink_ids, *encoder_)
                              : nullptr;
    if (encode_only_ && (!snapshot || snapshot->replaying())) {  // saved already, or nothing to save
      log_ << "  memory: " << stream.id
           << (snapshot && snapshot->following() ? ": another process is encoding it\n"
               : snapshot                        ? ": saved already\n"
               : polled ? ": proactive questions poll; their memory is not saved\n"
                        : ": the encoder keeps no memory to save\n");
      return;
    }
    EncodingStrategy& encoder = snapshot ? snapshot->encoder() : *encoder_;
    auto fresh = [&] {  // a new reader each time but the first (frames are decoded as the stream advances)
      return std::make_unique<StreamEncoding>(*backbone_, encoder, *retrieval_,
                                              frames ? std::move(frames) : video_frames(stream),
                                              prompts_.sink_ids, bank_options(stream), cfg_.header.stream.chunk_frames,
                                              frame_rule_from_name(cfg_.header.stream.frames_before_question,
                                                                   video_sampling().times),
                                              cfg_.header.stream.fps,
                                              traits_.reads_visual_tokens && !(snapshot && snapshot->replaying()));
    };
    auto encoding = fresh();
    const QuestionStep step{*backbone_, encoder, traits_, *retrieval_, *benchmark_, prompts_.answer,
                            {answer_policy(cfg_.header.stream.position_policy), cfg_.header.stream.max_new_tokens},
                            cfg_.header.stream.record_logits, cfg_.header.stream.context_window_s};
    // streaming: one memory for the stream, questions in time order. reencode_per_question (StreamKV's
    // reference protocol): a fresh memory encoded from frame 0 for every question.
    const bool reencode = cfg_.header.stream.protocol == "reencode_per_question";
    if (polled) {
      run_polled(stream, questions, step, *encoding, reencode);
      return;
    }
    ask_in_time_order(stream, questions, step, encoding, fresh, reencode);
    if (snapshot) snapshots_.finish(*snapshot, stream.id);
  }

  // The stream's frame reader; null when there is none to read (the video cannot be opened, or it is
  // shorter than stream.min_video_frames), each question not yet answered recorded as such.
  std::unique_ptr<FrameReader> open_frames(const Stream& stream, const std::vector<Question>& questions) {
    auto done = [&](const Question& q) { return predictions_.done(stream.id, q.id); };
    std::unique_ptr<FrameReader> frames;
    try {
      frames = video_frames(stream);
    } catch (const std::exception& e) {  // the input's fault, not the method's: asked again by the next run
      for (const auto& q : questions)
        if (!done(q)) record(fault_record(stream.id, q, e.what()));
      return nullptr;
    }
    if (const int64_t least = cfg_.header.stream.min_video_frames; frames->expected_frames() < least) {
      for (const auto& q : questions)  // as MuKV's reference driver, which logs and skips such a video
        if (!done(q))
          record(error_record(stream.id, q, fmt::format("skipped: the video has {} frames at {} fps, fewer than "
                                                        "stream.min_video_frames ({})",
                                                        frames->expected_frames(), cfg_.header.stream.fps, least)));
      return nullptr;
    }
    return frames;
  }

  // The questions of a stream that does not poll, each after encoding up to its time; under
  // reencode_per_question, each not yet answered from a `fresh` memory.
  void ask_in_time_order(const Stream& stream, const std::vector<Question>& questions, const QuestionStep& step,
                         std::unique_ptr<StreamEncoding>& encoding,
                         const std::function<std::unique_ptr<StreamEncoding>()>& fresh, bool reencode) {
    auto done = [&](const Question& q) { return predictions_.done(stream.id, q.id); };
    bool future_warned = false;
    for (Question q : questions) {
      if (reencode) {
        if (done(q)) continue;
        if (encoding->encoded() > 0) {  // the previous question's memory goes first (its spill files too)
          totals_.encoded_frames += encoding->encoded();
          encoding.reset();
          encoding = fresh();
        }
      }
      // Frames are decoded as far as each question: the end of the video is known once reached.
      const StreamEncoding::Step encoded =
          encode_until(*encoding, stream.id, q.offline ? std::numeric_limits<double>::infinity() : q.time);
      const auto end = encoding->video_end();
      if (q.offline) q.time = *end;  // asked after the whole video
      if (end && q.time > *end) {
        if (!done(q))
          record(error_record(stream.id, q, fmt::format("asked at {:.1f} s, after the end of the stream ({:.1f} s)",
                                                        q.time, *end)));
        continue;
      }
      if (encode_only_)
        replay_answered(step, *encoding, q);  // the encoder hears of the question, as when it is answered
      else if (!done(q))
        record(warn_of_future(answer_one(step, *encoding, stream.id, q, encoded), future_warned));
      else if (!reencode)  // one memory for the stream: the question changed it when it was answered
        replay_answered(step, *encoding, q);
    }
    totals_.encoded_frames += encoding->encoded();
  }

  // A stream of proactive questions (app/run/proactive_polling.h): polls in time order over one memory.
  void run_polled(const Stream& stream, const std::vector<Question>& questions, const QuestionStep& step,
                  StreamEncoding& encoding, bool reencode) {
    if (reencode) {  // a fresh memory per poll would re-encode the stream once a second
      for (const auto& q : questions)
        if (!predictions_.done(stream.id, q.id))
          record(error_record(stream.id, q, "stream.protocol reencode_per_question does not poll proactive questions: "
                                            "use streaming"));
      return;
    }
    run_polled_stream(step, encoding, stream.id, questions, predictions_,
                      {[&](double time) { return encode_until(encoding, stream.id, time); },
                       [&](const PredictionRecord& r) { record(r); }});
    totals_.encoded_frames += encoding.encoded();
  }

  StreamEncoding::Step encode_until(StreamEncoding& encoding, const std::string& stream_id, double time) {
    StreamEncoding::ChunkDone bar;
    std::optional<EncodingHeartbeat> heartbeat;  // not a terminal: timestamped lines, even while a chunk takes long
    if (live_progress_) {
      bar = [&](int64_t encoded, int64_t total, double fps) {
        redraw_line(log_, fmt::format("  encoding {} {} {}/{} frames, {:.1f} fps", stream_id,
                                      progress_bar(encoded, total, 30), encoded, total, fps));
      };
    } else {
      heartbeat.emplace(progress_lines_, stream_id, encoding.encoded(), encoding.total_frames());
      bar = [&](int64_t encoded, int64_t total, double fps) { heartbeat->update(encoded, total, fps); };
    }
    const StreamEncoding::Step step = encoding.encode_until(time, bar);
    if (live_progress_ && step.frames > 0) redraw_line(log_, "");
    totals_.encode_seconds += step.seconds;
    return step;
  }

  // The stream's frames as this run reads them: its rate and sampling rule, the backbone's
  // preprocessing on its own thread, the decoder on the cores the model leaves.
  std::unique_ptr<FrameReader> video_frames(const Stream& stream) const {
    return stream_frames(stream, cfg_.header.stream.fps, video_sampling(), frame_preparer(*backbone_),
                         decode_threads_beside(*backbone_));
  }

  VideoSampling video_sampling() const {
    return {frame_times_from_name(cfg_.header.stream.frame_times), frame_step_from_name(cfg_.header.stream.frame_step)};
  }

  // The first record of a stream whose frames were presented more than a frame interval after its
  // question (stream.frame_times stride on a variable-rate or 29.97-fps file) is warned of, once.
  const PredictionRecord& warn_of_future(const PredictionRecord& r, bool& warned) {
    const double interval = 1.0 / cfg_.header.stream.fps;
    if (!warned && r.future_s > interval) {
      warned = true;
      log_ << fmt::format("  warning: {}/{}: frames presented up to {:.2f} s after the question's time ({:.2f} s) "
                          "were encoded (stream.frame_times stride stamps frame i at i / avg_fps; the records' "
                          "future_s say how far; frame_times presented keeps the past only)\n",
                          r.stream, r.question_id, r.future_s, r.time.value_or(0));
    }
    return r;
  }

  MemoryBankOptions bank_options(const Stream& stream) const {
    const auto& so = cfg_.header.stream;
    return {backbone_->num_layers(), backbone_->device(), so.ram_budget_mb < 0 ? -1 : so.ram_budget_mb * (int64_t{1} << 20),
            (so.spill_dir.empty() ? dir_ + "/spill/" : so.spill_dir + "/" + spill_subfolder(dir_) + "/") +
                safe_path_component(stream.id),
            KvCodecOptions{so.kv_codec, so.kv_codec_group}};
  }

  // Writes one record and logs it (svqa encode: nothing).
  void record(const PredictionRecord& r) {
    if (encode_only_) return;
    predictions_.append(r);
    log_ << "  " << progress_->step() << " " << r.stream << "/" << r.question_id;
    if (r.faulted()) {
      log_ << ": fault (asked again by the next run): " << r.error << std::endl;
      if (!outcome_.faults++) outcome_.first_fault = r.stream + ": " + r.error;
      return;
    }
    if (!r.answered()) {
      log_ << ": error: " << r.error << std::endl;
      ++outcome_.errors;
      return;
    }
    log_ << fmt::format(" @{:.1f} s: ", r.time.value_or(0)) << nlohmann::json(r.output).dump() << std::endl;
  }

  const bool encode_only_;
  const bool closes_run_;  // false for a part of the run (a stream shard): the merge closes it
  const ExperimentConfig& cfg_;
  const std::string dir_;
  std::ostream& log_;
  const bool live_progress_;
  ProgressLines progress_lines_{log_, kProgressLineSeconds};  // used when not live_progress_
  std::unique_ptr<Benchmark> benchmark_;
  const std::vector<Stream> streams_;
  std::unique_ptr<Backbone> backbone_;
  std::unique_ptr<EncodingStrategy> encoder_;
  EncoderTraits traits_;  // what its registration declares it does to memory
  std::unique_ptr<RetrievalStrategy> retrieval_;
  const Prompts prompts_;
  PredictionLog predictions_;
  RunJudge judge_;
  std::unique_ptr<Progress> progress_;
  RunTotals totals_;
  RunOutcome outcome_;
  SnapshotStreams snapshots_;
};

}  // namespace

RunOutcome run_streams(const ExperimentConfig& cfg, const Registries& registries, const std::string& dir, std::ostream& log,
                       bool live_progress, const RunPart* part) {
  return StreamRunner(cfg, registries, dir, log, live_progress, false, part).run();
}

void encode_streams(const ExperimentConfig& cfg, const Registries& registries, const std::string& dir, std::ostream& log) {
  if (cfg.header.memory.cache.empty())
    throw std::invalid_argument("memory.cache: svqa encode writes streams' memory there; set it (the folder svqa run reads)");
  StreamRunner(cfg, registries, dir, log, false, /*encode_only=*/true).run();
}

}  // namespace svqa
