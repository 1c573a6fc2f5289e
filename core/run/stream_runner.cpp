#include "core/run/stream_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <memory>
#include <sstream>

#include "benchmarks/answer_parsing.h"
#include "benchmarks/llm_judge.h"
#include "benchmarks/prediction_records.h"
#include "benchmarks/scoring.h"
#include "core/io/atomic_file.h"
#include "core/engine/benchmark.h"
#include "core/run/prediction_log.h"
#include "core/run/progress.h"
#include "core/engine/question_answerer.h"
#include "core/engine/strategy.h"
#include "models/backbone.h"
#include "core/engine/visual_units.h"
#include "models/frame_source.h"

namespace svqa {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

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

// Frames stored at a known rate (RVS-Movie's 1-fps .npy) sampled down to `fps` as ReKV does:
// indices linspace(0, N-1, int(N * fps / source_fps)), truncated; timestamps stay index / source_fps.
Frames resample_frames(const Frames& all, double fps) {
  const int64_t n = all.rgb.size(0);
  const int64_t k = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(n) * fps / all.fps));
  if (k >= n) return all;
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < k; ++i)
    keep.push_back(k == 1 ? 0 : static_cast<int64_t>(static_cast<double>(i) * static_cast<double>(n - 1) / static_cast<double>(k - 1)));
  Frames out{all.rgb.index_select(0, at::tensor(keep, at::kLong)), {}, fps};
  for (const int64_t i : keep) out.timestamps.push_back(all.timestamps[static_cast<size_t>(i)]);
  return out;
}

nlohmann::json memory_json(const MemoryAccounting& a) {
  nlohmann::json by = nlohmann::json::object();
  for (int g = 0; g < kGranularities; ++g)
    if (a.tokens_by_granularity[g])
      by[granularity_name(static_cast<Granularity>(g))] = {{"tokens", a.tokens_by_granularity[g]},
                                                            {"bytes", a.bytes_by_granularity[g]}};
  return {{"blocks", a.blocks},       {"tokens", a.tokens},
          {"ram_bytes", a.ram_bytes}, {"disk_bytes", a.disk_bytes},
          {"representative_bytes", a.representative_bytes}, {"by_granularity", by}};
}

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

// The retrieval scores of a question as [[block start s, score], ...] in block order, 5 significant digits.
nlohmann::json scores_json(const std::map<int64_t, double>& scores, const MemoryBank& bank) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [id, score] : scores) {
    std::ostringstream v;
    v << std::setprecision(5) << score;
    out.push_back({bank.info(id).start_time, std::stod(v.str())});
  }
  return out;
}

}  // namespace

int run_streams(const ExperimentConfig& cfg, const Registries& registries, const std::string& dir, std::ostream& log,
                bool live_progress) {
  const auto& so = cfg.header.stream;
  const auto& comp = [&](const char* section) -> const ComponentChoice& { return *cfg.component(section); };
  auto backbone = registries.backbone.create(comp("backbone").type, comp("backbone").options, cfg.header.runtime);
  auto encoder = registries.encoding.create(comp("encoding").type, comp("encoding").options);
  auto retrieval = registries.retrieval.create(comp("retrieval").type, comp("retrieval").options);
  auto benchmark = registries.benchmark.create(comp("benchmark").type, comp("benchmark").options);
  const Prompts prompts = prompts_for(so, *backbone);
  const AnswerRule rule = benchmark->answer_rule();  // how questions are asked and answers read
  const AnswerOptions answer_options{position_policy_from_name(so.position_policy), so.max_new_tokens};

  PredictionLog predictions(dir + "/predictions.jsonl");
  const auto streams = benchmark->streams();
  // The judge of open-ended answers, made now so a bad judge config fails before hours of encoding.
  std::unique_ptr<LlmJudge> llm;
  std::string judge_cache;
  const bool open_ended = std::any_of(streams.begin(), streams.end(), [](const Stream& s) {
    return std::any_of(s.questions.begin(), s.questions.end(), [](const Question& q) { return q.options.empty(); });
  });
  if (open_ended && !LlmJudge::resolved_base_url(cfg.header.judge).empty()) {
    JudgeOptions judge_options = cfg.header.judge;
    if (judge_options.cache.empty())  // shared by the runs beside this one (a grid's), so none is judged twice
      judge_options.cache = (std::filesystem::path(dir).parent_path() / "judge_cache.jsonl").string();
    llm = std::make_unique<LlmJudge>(judge_options);
    judge_cache = judge_options.cache;
  }
  int64_t total = 0, skipped = 0;
  for (const auto& s : streams)
    for (const auto& q : s.questions) total += 1, skipped += predictions.done(s.id, q.id);
  if (backbone->manifest().source.rfind("tiny:", 0) == 0)
    log << "note: " << backbone->manifest().dir << " is a tiny model with RANDOM weights: its answers are noise; "
        << "everything around it is the real pipeline. With a real checkpoint (docs/backbones.md):\n"
        << "  .venv/bin/python -m models.export --model ~/hf/llava-onevision-qwen2-0.5b-ov-hf --dtype bfloat16 "
           "--out exports/llava-ov-0.5b\n"
        << "  build/bin/svqa run experiments/demo.yaml --set backbone.options.export=exports/llava-ov-0.5b "
           "--set runtime.dtype=bfloat16 --set encoding.options.n_local=15000 --set retrieval.options.retrieve_size=64\n";
  log << cfg.header.name << ": " << streams.size() << " streams, " << total << " questions"
      << (skipped ? " (" + std::to_string(skipped) + " already answered: resuming)" : std::string()) << "\n";

  int errors = 0;
  Progress progress(total, skipped);
  double encode_seconds_total = 0;
  int64_t encoded_frames_total = 0;
  for (const auto& stream : streams) {
    std::vector<Question> questions = stream.questions;
    std::stable_sort(questions.begin(), questions.end(), [](const Question& a, const Question& b) { return a.time < b.time; });
    if (std::all_of(questions.begin(), questions.end(), [&](const Question& q) { return predictions.done(stream.id, q.id); }))
      continue;
    auto record_error = [&](const Question& q, const std::string& why) {
      const nlohmann::json time = std::isfinite(q.time) ? nlohmann::json(q.time) : nlohmann::json(nullptr);  // offline
      predictions.append({{"stream", stream.id}, {"question_id", q.id}, {"time", time}, {"question", q.text},
                          {"category", q.category}, {"error", why}});
      log << "  " << progress.step() << " " << stream.id << "/" << q.id << ": error: " << why << "\n";
      ++errors;
    };
    Frames frames;
    try {
      frames = stream.source_fps > 0 ? resample_frames(read_frames(stream.video, stream.source_fps), so.fps)
                                     : read_frames(stream.video, so.fps);
    } catch (const std::exception& e) {
      for (const auto& q : questions)
        if (!predictions.done(stream.id, q.id)) record_error(q, e.what());
      continue;
    }
    const int64_t n_frames = frames.rgb.size(0);
    const double video_end = frames.timestamps.back() + 1.0 / frames.fps;

    MemoryBankOptions bank_options{backbone->num_layers(), backbone->device(),
                                   so.ram_budget_mb < 0 ? -1 : so.ram_budget_mb * (int64_t{1} << 20),
                                   so.spill_dir.empty() ? dir + "/spill/" + stream.id : so.spill_dir + "/" + stream.id};
    MemoryBank bank(bank_options);
    encoder->begin_stream(*backbone, prompts.sink_ids, bank);
    retrieval->begin_stream();
    VisualUnitMaker units(*backbone, frames);
    const int64_t video_start = encoder->sinks().size();
    int64_t encoded = 0;
    double encode_seconds = 0;

    for (Question q : questions) {
      if (q.offline) q.time = video_end;  // asked after the whole video
      if (q.time > video_end) {
        if (!predictions.done(stream.id, q.id))
          record_error(q, "asked at " + fixed(q.time, 1) + " s, after the end of the stream (" + fixed(video_end, 1) + " s)");
        continue;
      }
      // Encode every whole unit whose frames all come at or before the question.
      int64_t visible = 0;
      while (visible < n_frames && frames.timestamps[static_cast<size_t>(visible)] <= q.time) ++visible;
      visible -= visible % units.frames_per_unit();
      const auto t0 = Clock::now();
      const int64_t chunk = std::max<int64_t>(units.frames_per_unit(), so.chunk_frames - so.chunk_frames % units.frames_per_unit());
      const int64_t encoded_before = encoded;
      while (encoded < visible) {
        const int64_t count = std::min(chunk, visible - encoded);
        const auto batch = units.make(encoded, count, video_start, encoder->next_position());
        encoder->encode(*backbone, batch, bank);
        for (const auto& u : batch) retrieval->observe(u);
        encoded += count;
        if (live_progress)
          redraw_line(log, "  encoding " + stream.id + " " + progress_bar(encoded, n_frames, 30) + " " +
                               std::to_string(encoded) + "/" + std::to_string(n_frames) + " frames, " +
                               fixed(static_cast<double>(encoded - encoded_before) / seconds_since(t0), 1) + " fps");
      }
      if (live_progress && encoded > encoded_before) redraw_line(log, "");
      const double encode_s = seconds_since(t0);
      encode_seconds += encode_s;
      if (predictions.done(stream.id, q.id)) continue;

      const QuestionInfo info{q.id, q.text, q.time};
      std::string prompt = prompts.answer;
      prompt.replace(prompt.find("{question}"), 10, format_question(rule, q));
      prompt += answer_prefix(rule, q);
      Answer a;
      try {
        a = answer_question(*backbone, *encoder, bank, *retrieval, info, prompt, answer_options);
      } catch (const std::exception& e) {
        record_error(q, e.what());
        continue;
      }
      nlohmann::json spans = nlohmann::json::object();
      for (const auto& layer : a.selected)
        for (const int64_t id : layer) {
          const auto& b = bank.info(id);
          if (b.end_time > q.time) throw std::logic_error("causality: block " + std::to_string(id) + " ends after its question");
          spans[std::to_string(id)] = {b.start_time, b.end_time};
        }
      nlohmann::json rec = {{"stream", stream.id}, {"question_id", q.id}, {"time", q.time}, {"question", q.text},
                            {"category", q.category}, {"options", q.options}, {"reference", q.answer},
                            {"prediction", a.text}, {"prediction_ids", a.ids},
                            {"retrieved", a.selected}, {"block_spans", spans},
                            {"context_tokens", a.context_tokens}, {"frames_encoded", encoded},
                            {"timing", {{"encode_s", encode_s}, {"encode_frames", encoded - encoded_before},
                                        {"retrieve_s", a.retrieve_seconds}, {"prefill_s", a.prefill_seconds},
                                        {"decode_s", a.decode_seconds},
                                        // the first token is the argmax of the prompt prefill's logits
                                        {"ttft_s", a.retrieve_seconds + a.prefill_seconds}}},
                            {"memory", memory_json(bank.accounting())}};
      if (!a.block_scores.empty()) rec["retrieval_scores"] = scores_json(a.block_scores, bank);
      for (const auto& [expert, scores] : a.expert_block_scores)  // a mixture's experts (rrf_mixture)
        if (!scores.empty()) rec["retrieval_scores_" + expert] = scores_json(scores, bank);
      if (const auto window = encoder->window_tokens()) rec["memory"]["window_tokens"] = *window;
      if (!q.options.empty()) {
        const Verdict v = judge(rule, q, a.text);  // unanswered or no gold: no "correct"
        rec["letter"] = v.parsed;
        if (!gold_letter(rule, q).empty() && v.outcome != Verdict::Outcome::unanswered)
          rec["correct"] = v.outcome == Verdict::Outcome::correct;
      }
      predictions.append(rec);
      log << "  " << progress.step() << " " << stream.id << "/" << q.id << " @" << fixed(q.time, 1)
          << " s: " << nlohmann::json(a.text).dump() << "\n";
    }
    encode_seconds_total += encode_seconds;
    encoded_frames_total += encoded;
  }

  // metrics.json from every record, earlier runs' included.
  int64_t answered = 0, errored = 0, scored = 0, correct = 0;
  double retrieve = 0, prefill = 0, decode = 0;
  for (const auto& r : predictions.records()) {
    if (r.contains("error")) {
      ++errored;
      continue;
    }
    ++answered;
    retrieve += r["timing"]["retrieve_s"].get<double>();
    prefill += r["timing"]["prefill_s"].get<double>();
    decode += r["timing"]["decode_s"].get<double>();
    if (r.contains("correct")) ++scored, correct += r["correct"].get<bool>();
  }
  nlohmann::json metrics = {
      {"experiment", cfg.header.name},
      {"questions", total},
      {"answered", answered},
      {"errored", errored},
      {"accuracy", scored ? nlohmann::json(double(correct) / double(scored)) : nlohmann::json(nullptr)},
      {"scored", scored},
      {"mean_seconds", {{"retrieve", answered ? retrieve / answered : 0.0}, {"prefill", answered ? prefill / answered : 0.0},
                        {"decode", answered ? decode / answered : 0.0}}},
      {"encode_fps_this_run", encode_seconds_total > 0 ? encoded_frames_total / encode_seconds_total : 0.0}};
  write_file_atomically(dir + "/metrics.json", metrics.dump(2) + "\n");
  const auto records = read_prediction_records(dir + "/predictions.jsonl");
  ScoreReport scores = score_predictions(comp("benchmark").type, rule, streams, records);
  if (llm && scores.open_ended_answered) {
    log << "judging " << scores.open_ended_answered << " open-ended answers with " << llm->model() << " at "
        << llm->endpoint() << " (" << llm->cached_judgments() << " cached in " << judge_cache << ")\n";
    judge_open_ended(scores, streams, records, *llm, &log);
  }
  write_file_atomically(dir + "/scores.json", score_json(scores));
  if (scores.judge)
    log << "judge " << scores.judge->model << ": accuracy " << fixed(scores.judge->accuracy().value_or(0) * 100, 1)
        << " %, score " << fixed(scores.judge->mean_score().value_or(0), 2) << " (" << scores.judge->failed
        << " failed: rerun to retry them)\n";

  // The table: one row per question.
  log << "\n" << std::left << std::setw(22) << "question" << std::setw(8) << "time" << std::setw(24) << "answer"
      << std::setw(30) << "retrieved (layer 0, s)" << std::setw(26) << "enc/ret/pre/dec s" << "memory\n";
  for (const auto& r : predictions.records()) {
    std::string id = r["stream"].get<std::string>() + "/" + r["question_id"].get<std::string>();
    log << std::setw(22) << id.substr(0, 21) << std::setw(8)
        << (r["time"].is_number() ? fixed(r["time"].get<double>(), 1) : std::string("end"));
    if (r.contains("error")) {
      log << "error: " << r["error"].get<std::string>() << "\n";
      continue;
    }
    std::string times;
    for (const auto& id_ : r["retrieved"][0]) {
      const auto span = r["block_spans"][std::to_string(id_.get<int64_t>())];
      times += (times.empty() ? "" : ",") + fixed(span[0].get<double>(), 0);
    }
    if (times.size() > 28) times = times.substr(0, 25) + "...";
    const auto& t = r["timing"];
    const auto& mem = r["memory"];
    log << std::setw(24) << nlohmann::json(r["prediction"]).dump().substr(0, 23) << std::setw(30) << times
        << std::setw(26)
        << (fixed(t["encode_s"].get<double>(), 2) + "/" + fixed(t["retrieve_s"].get<double>(), 2) + "/" +
            fixed(t["prefill_s"].get<double>(), 2) + "/" + fixed(t["decode_s"].get<double>(), 2))
        << mem["tokens"].get<int64_t>() << " tok, " << fixed(mem["ram_bytes"].get<double>() / 1048576.0, 1) << " MiB RAM, "
        << fixed(mem["disk_bytes"].get<double>() / 1048576.0, 1) << " MiB disk\n";
  }
  return errors;
}

}  // namespace svqa
