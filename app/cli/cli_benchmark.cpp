// `svqa benchmark inspect`, `svqa benchmark check` and `svqa score`: look at an official annotation
// file through its loader (counts, categories, every problem), check the videos it names, and score
// any system's predictions on it with the benchmark's official rules (docs/benchmarks.md).

#define CXXOPTS_VECTOR_DELIMITER '\x1f'  // as in cli.cpp: one cxxopts configuration per program
#include <cxxopts.hpp>

#include <algorithm>
#include <any>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "benchmarks/datasets/answer_parsing.h"
#include "benchmarks/scoring/llm_judge.h"
#include "benchmarks/scoring/ovobench_results.h"
#include "benchmarks/scoring/predictions.h"
#include "benchmarks/scoring/scoring.h"
#include "core/io/atomic_file.h"
#include "engine/benchmark.h"
#include "app/cli/cli_commands.h"
#include "core/config/config_node.h"
#include "core/config/experiment.h"
#include "engine/registries.h"
#include "core/io/format.h"
#include "models/video/frame_source.h"

namespace svqa {
namespace {

// The options every benchmark command takes after NAME ANNOTATIONS.
void add_benchmark_options(cxxopts::Options& options) {
  options.add_options()("name", "benchmark (svqa list shows them)", cxxopts::value<std::string>())(
      "annotations", "the benchmark's annotation file", cxxopts::value<std::string>())(
      "video-root", "directory the videos are under (the benchmark's video_root)", cxxopts::value<std::string>())(
      "set", "another benchmark option, e.g. --set rule=rekv (repeatable)", cxxopts::value<std::vector<std::string>>())(
      "h,help", "show this help");
}

// The benchmark NAME with its options from the command line, validated like an experiment's.
std::unique_ptr<Benchmark> make_benchmark(const Registries& registries, const cxxopts::ParseResult& args) {
  if (!args.count("name")) throw UsageError("missing the benchmark name (svqa list shows them)");
  if (!args.count("annotations")) throw UsageError("missing the annotation file");
  const std::string name = args["name"].as<std::string>();
  const RegistryEntryInfo* info = registries.benchmark.find_info(name);
  if (!info) throw UsageError(registries.benchmark.unknown_name_message(name));

  ConfigNode options = ConfigNode::map({"command line", 0, 0});
  auto set = [&](const std::string& key, ConfigNode value) {
    options.erase(key);
    options.entries.push_back({key, value.loc, std::move(value)});
  };
  auto text = [](const std::string& v, const std::string& origin) {
    ConfigNode n;
    n.kind = ConfigNode::Kind::Scalar;
    n.scalar = v;
    n.quoted = true;
    n.loc = {origin, 0, 0};
    return n;
  };
  set("annotations", text(args["annotations"].as<std::string>(), "ANNOTATIONS"));
  if (args.count("video-root")) set("video_root", text(args["video-root"].as<std::string>(), "--video-root"));
  if (args.count("set"))
    for (const auto& kv : args["set"].as<std::vector<std::string>>()) {
      const size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) throw UsageError("--set " + kv + ": expected KEY=VALUE");
      set(kv.substr(0, eq), parse_yaml_text(kv.substr(eq + 1), "--set " + kv));
    }
  ErrorList errors;
  std::any parsed = info->options->parse_any(&options, "benchmark.options", errors);
  errors.throw_if_any();
  return registries.benchmark.create(name, parsed);
}

// The LLM judge's options of `svqa score` (the `judge` section of an experiment, docs/benchmarks.md).
void add_judge_options(cxxopts::Options& options) {
  const JudgeOptions defaults;
  auto add = options.add_options("LLM judge of open-ended answers (RVS)");
  add("judge-url", "OpenAI-compatible API root (…/v1); default $OPENAI_BASE_URL; neither: not judged",
      cxxopts::value<std::string>());
  add("judge-model", "judge model; default $SVQA_JUDGE_MODEL", cxxopts::value<std::string>());
  add("judge-key-env",
      "environment variable holding the API key; unset: no Authorization header (default " + defaults.api_key_env +
          ")",
      cxxopts::value<std::string>());
  add("judge-timeout", "seconds one request may take (default " + std::to_string(int(defaults.timeout_s)) + ")",
      cxxopts::value<double>());
  add("judge-attempts",
      "tries per question, then it counts as failed (default " + std::to_string(defaults.max_attempts) + ")",
      cxxopts::value<int64_t>());
  add("judge-backoff",
      "seconds before the 2nd try, doubled before each next one (default " +
          std::to_string(int(defaults.backoff_s)) + ")",
      cxxopts::value<double>());
  add("judge-cache", "JSON Lines cache of judgments (default: judge_cache.jsonl beside the predictions; \"\": none)",
      cxxopts::value<std::string>());
}

// JudgeOptions from the flags; what is not given keeps its default (or environment fallback).
JudgeOptions judge_options(const cxxopts::ParseResult& args, const std::string& predictions_path) {
  JudgeOptions o;
  if (args.count("judge-url")) o.base_url = args["judge-url"].as<std::string>();
  if (args.count("judge-model")) o.model = args["judge-model"].as<std::string>();
  if (args.count("judge-key-env")) o.api_key_env = args["judge-key-env"].as<std::string>();
  if (args.count("judge-timeout")) o.timeout_s = args["judge-timeout"].as<double>();
  if (args.count("judge-attempts")) o.max_attempts = args["judge-attempts"].as<int64_t>();
  if (args.count("judge-backoff")) o.backoff_s = args["judge-backoff"].as<double>();
  o.cache = args.count("judge-cache")
                ? args["judge-cache"].as<std::string>()
                : (std::filesystem::path(predictions_path).parent_path() / "judge_cache.jsonl").string();
  return o;
}

// Each question as the run will put it (inspect --questions), in the order the run asks them.
std::string questions_jsonl(const Benchmark& benchmark, const std::vector<Stream>& streams) {
  std::string out;
  for (const auto& s : streams) {
    std::vector<Question> questions = s.questions;
    std::stable_sort(questions.begin(), questions.end(), [](const Question& a, const Question& b) { return a.time < b.time; });
    for (const auto& q : questions) {
      nlohmann::json line{{"stream", s.id},
                            {"question_id", q.id},
                            {"time", std::isfinite(q.time) ? nlohmann::json(q.time) : nlohmann::json(nullptr)},
                            {"category", q.category},
                            {"prompt", benchmark.question_text(q)},
                            {"answer_prefix", benchmark.answer_prefix(q)},
                            {"gold", judged_by_rule(q) ? nlohmann::json(gold_letter(benchmark.answer_rule(), q))
                                                       : nlohmann::json(q.answer)}};
      if (!q.poll_times.empty()) {  // a proactive question: polled with this prompt at these times first
        Question poll = q;
        poll.text = q.poll_text;
        line["poll_prompt"] = benchmark.question_text(poll);
        line["poll_times"] = q.poll_times;
      }
      out += line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    }
  }
  return out;
}

cxxopts::ParseResult parse(cxxopts::Options& options, int argc, const char* const* argv,
                           const std::vector<std::string>& positional) {
  options.parse_positional(positional);
  auto args = options.parse(argc, argv);
  if (!args.unmatched().empty()) throw UsageError("unexpected argument '" + args.unmatched()[0] + "'");
  return args;
}

// What `benchmark inspect` counts over a benchmark's questions.
struct QuestionCounts {
  int64_t questions = 0, multiple_choice = 0, closed = 0, offline = 0, with_evidence = 0, polls = 0, proactive = 0;
  std::map<size_t, int64_t> by_option_count;
  std::map<std::string, int64_t> by_category;
  std::map<std::string, std::set<std::string>> items_by_category;  // records asked several times (OVO-Bench's probes)
};

QuestionCounts count_questions(const std::vector<Stream>& streams) {
  QuestionCounts n;
  for (const auto& s : streams)
    for (const auto& q : s.questions) {
      ++n.questions;
      n.offline += q.offline;
      n.with_evidence += !q.evidence.empty();
      n.polls += static_cast<int64_t>(q.poll_times.size());
      if (!q.options.empty()) ++n.multiple_choice, ++n.by_option_count[q.options.size()];
      else if (!q.poll_times.empty()) ++n.proactive;
      else n.closed += judged_by_rule(q);
      for (const auto& c : q.categories.empty() ? std::vector<std::string>{q.category} : q.categories) {
        ++n.by_category[c.empty() ? "(none)" : c];
        if (const auto item = q.tags.find("item"); item != q.tags.end())
          n.items_by_category[c.empty() ? "(none)" : c].insert(item->second);
      }
    }
  return n;
}

void print_question_counts(const QuestionCounts& n) {
  std::cout << "questions: " << n.questions << " (" << n.multiple_choice << " multiple choice, "
            << (n.closed ? std::to_string(n.closed) + " closed without options (a count, Yes/No), " : "")
            << (n.proactive ? std::to_string(n.proactive) + " proactive (a text to output at the right time), " : "")
            << n.questions - n.multiple_choice - n.closed - n.proactive << " open-ended; " << n.offline << " offline, "
            << n.questions - n.offline << " asked at a time; " << n.with_evidence << " with evidence)\n";
  if (n.polls)
    std::cout << "polls: at most " << n.polls << " (proactive questions, once a second until the first yes; then the "
              << "question itself)\n";
  if (!n.by_option_count.empty()) {
    std::cout << "options per question:";
    for (const auto& [options, count] : n.by_option_count) std::cout << " " << options << " (" << count << ")";
    std::cout << "\n";
  }
  if (!n.items_by_category.empty()) {
    size_t items = 0;
    for (const auto& [_, ids] : n.items_by_category) items += ids.size();
    std::cout << "items (annotation records; a record asked at several times is one item): " << items << "\n";
  }
  std::cout << "categories:\n";
  for (const auto& [c, count] : n.by_category) {
    std::cout << "  " << c << ": " << count;
    if (const auto it = n.items_by_category.find(c); it != n.items_by_category.end() && it->second.size() != size_t(count))
      std::cout << " (" << it->second.size() << " items)";
    std::cout << "\n";
  }
}

int inspect(int argc, const char* const* argv, const Registries& registries) {
  cxxopts::Options options("svqa benchmark inspect",
                           "Load an annotation file with a benchmark's loader: videos, questions, categories, and "
                           "every problem found (file, record, field). Exit 1 if a record cannot be used.");
  add_benchmark_options(options);
  options.add_options()("questions",
                        "also write every question as a JSON line here: stream, id, time, category, the text the "
                        "answer prompt gets in place of {question} (the benchmark's own prompt), gold",
                        cxxopts::value<std::string>());
  options.positional_help("NAME ANNOTATIONS");
  const auto args = parse(options, argc, argv, {"name", "annotations"});
  if (args.count("help")) {
    std::cout << options.help();
    return 0;
  }
  auto benchmark = make_benchmark(registries, args);
  std::vector<LoadProblem> problems;
  const std::vector<Stream> streams = benchmark->load(problems);
  const QuestionCounts counts = count_questions(streams);
  if (args.count("video-root"))
    for (const auto& s : streams)
      if (!std::filesystem::exists(s.video)) problems.push_back({s.id, "video not found: " + s.video, false});

  std::cout << args["name"].as<std::string>() << ": " << args["annotations"].as<std::string>() << "\n"
            << "answer rule: " << rule_name(benchmark->answer_rule()) << "\n"
            << "videos: " << streams.size() << "\n";
  print_question_counts(counts);
  if (args.count("questions")) write_file_atomically(args["questions"].as<std::string>(), questions_jsonl(*benchmark, streams));
  int64_t fatal = 0;
  for (const auto& p : problems) fatal += p.fatal;
  std::cout << "problems: " << problems.size() << " (" << fatal << " make a record unusable)\n";
  for (const auto& p : problems) std::cout << "  " << (p.fatal ? "error: " : "") << p.where << ": " << p.what << "\n";
  return fatal ? 1 : 0;
}

// One video as a run would meet it: opened and its first frame decoded through svqa's frame reader.
struct VideoCheck {
  std::string problem;  // empty: readable
  double seconds = 0;   // as the source states it (a video's frame count / average fps)
  int64_t frames = 0;   // frames a run at the given fps encodes
};

VideoCheck check_video(const std::string& path, double fps, const VideoSampling& sampling) {
  VideoCheck out;
  try {
    auto reader = open_frame_reader(path, fps, sampling);
    reader->read(1);  // the first frame decoded, not only the header read
    out.frames = reader->expected_frames();
    out.seconds = static_cast<double>(out.frames) / reader->fps();
  } catch (const std::exception& e) {
    out.problem = e.what();
  }
  return out;
}

std::string duration_text(double seconds) {
  const auto s = static_cast<int64_t>(std::llround(seconds));
  return fmt::format("{:.1f} s ({}:{:02}:{:02})", seconds, s / 3600, s / 60 % 60, s % 60);
}

int check(int argc, const char* const* argv, const Registries& registries) {
  const StreamOptions defaults;
  cxxopts::Options options("svqa benchmark check",
                           "Check a benchmark's videos before a run: each one the annotations name is opened and its "
                           "first frame decoded; lists those present, missing and unreadable, the total duration "
                           "and the frames a run at --fps encodes. Exit 1 if any is missing or unreadable.");
  add_benchmark_options(options);
  options.add_options()("fps", "frames sampled per second, as the run's stream.fps (default " +
                                   format_number(defaults.fps) + ", stream.fps's default)",
                        cxxopts::value<double>()->default_value(format_number(defaults.fps)))(
      "frame-step", "reference or nearest, as the run's stream.frame_step",
      cxxopts::value<std::string>()->default_value(defaults.frame_step))(
      "frame-times", "presented or stride, as the run's stream.frame_times",
      cxxopts::value<std::string>()->default_value(defaults.frame_times));
  options.positional_help("NAME ANNOTATIONS");
  const auto args = parse(options, argc, argv, {"name", "annotations"});
  if (args.count("help")) {
    std::cout << options.help();
    return 0;
  }
  const double fps = args["fps"].as<double>();
  if (!(fps > 0) || fps > 1000) throw UsageError("--fps: expected a number in (0, 1000], got " + format_number(fps));
  const VideoSampling sampling =
      video_sampling_options(args["frame-times"].as<std::string>(), args["frame-step"].as<std::string>());
  auto benchmark = make_benchmark(registries, args);
  std::vector<std::string> videos;  // each once, in the file's order
  for (const auto& s : benchmark->streams())
    if (std::find(videos.begin(), videos.end(), s.video) == videos.end()) videos.push_back(s.video);
  std::vector<std::string> missing, unreadable;
  int64_t present = 0, frames = 0;
  double seconds = 0;
  for (const auto& video : videos) {
    std::error_code ec;
    if (!std::filesystem::exists(video, ec)) {
      missing.push_back(video);
      continue;
    }
    const VideoCheck c = check_video(video, fps, sampling);
    if (!c.problem.empty()) {
      unreadable.push_back(c.problem);
      continue;
    }
    ++present, frames += c.frames, seconds += c.seconds;
    std::cout << "present: " << video << ": " << duration_text(c.seconds) << ", " << c.frames << " frames\n";
  }
  for (const auto& m : missing) std::cout << "missing: " << m << "\n";
  for (const auto& u : unreadable) std::cout << "unreadable: " << u << "\n";
  std::cout << "videos: " << videos.size() << " (" << present << " present, " << missing.size() << " missing, "
            << unreadable.size() << " unreadable)\n"
            << "duration: " << duration_text(seconds) << " (the videos present)\n"
            << "frames at " << format_number(fps) << " fps: " << frames << " (what a run encodes of them)\n";
  return missing.empty() && unreadable.empty() ? 0 : 1;
}

}  // namespace

int cmd_benchmark(int argc, const char* const* argv, const Registries& registries) {
  const std::string sub = argc > 1 ? argv[1] : "";
  if (sub == "inspect") return inspect(argc - 1, argv + 1, registries);
  if (sub == "check") return check(argc - 1, argv + 1, registries);
  if (sub == "-h" || sub == "--help") {
    std::cout << "usage: svqa benchmark inspect NAME ANNOTATIONS [--video-root DIR] [--set KEY=VALUE]...\n"
                 "       svqa benchmark check NAME ANNOTATIONS [--video-root DIR] [--fps F] [--set KEY=VALUE]...\n";
    return 0;
  }
  throw UsageError(sub.empty() ? "missing the subcommand (inspect, check)"
                               : "unknown subcommand '" + sub + "' (inspect, check)");
}

int cmd_score(int argc, const char* const* argv, const Registries& registries) {
  cxxopts::Options options("svqa score",
                           "Score predictions (JSON Lines: question_id and the model's raw output; svqa's "
                           "predictions.jsonl) with the benchmark's official rules; prints a markdown table. "
                           "Open-ended answers (RVS) are judged by an LLM when a judge URL is known.");
  add_benchmark_options(options);
  options.add_options()("predictions",
                        "PREDICTIONS.jsonl; ovobench: also its results file or results/MODEL/ (not .jsonl)",
                        cxxopts::value<std::string>())(
      "out", "also write everything, per question too, as JSON here", cxxopts::value<std::string>());
  add_judge_options(options);
  options.positional_help("NAME ANNOTATIONS PREDICTIONS.jsonl");
  const auto args = parse(options, argc, argv, {"name", "annotations", "predictions"});
  if (args.count("help")) {
    std::cout << options.help();
    return 0;
  }
  if (!args.count("predictions")) throw UsageError("missing the predictions file (PREDICTIONS.jsonl)");
  const std::string predictions_path = args["predictions"].as<std::string>();
  auto benchmark = make_benchmark(registries, args);
  const std::vector<Stream> streams = benchmark->streams();
  // OVO-Bench's own results (a file, or results/MODEL/ as score.py reads it), else JSON Lines records.
  const bool official_results = benchmark->answer_rule() == AnswerRule::ovobench &&
                                (std::filesystem::is_directory(predictions_path) || predictions_path.size() < 6 ||
                                 predictions_path.substr(predictions_path.size() - 6) != ".jsonl");
  const auto predictions =
      official_results ? ovobench_results_records(read_ovobench_results(predictions_path), predictions_path)
                       : read_predictions(predictions_path);
  ScoreReport report =
      score_predictions(args["name"].as<std::string>(), benchmark->answer_rule(), streams, predictions);
  const JudgeOptions judge = judge_options(args, predictions_path);
  if (report.open_ended && !LlmJudge::resolved_base_url(judge).empty()) {
    std::unique_ptr<LlmJudge> llm;
    try {
      llm = std::make_unique<LlmJudge>(judge);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string(e.what()) + " (the --judge-* options of svqa score --help)");
    }
    std::cerr << "judge: " << llm->model() << " at " << llm->endpoint() << "; " << llm->cached_judgments()
              << " judgments cached in " << (judge.cache.empty() ? "(no cache)" : judge.cache);
    if (llm->cache_lines_skipped()) std::cerr << " (" << llm->cache_lines_skipped() << " unreadable lines skipped)";
    std::cerr << "\n";
    judge_open_ended(report, streams, predictions, *llm, &std::cerr);
  } else if (report.open_ended && (args.count("judge-model") || args.count("judge-key-env"))) {
    std::cerr << "svqa score: warning: no judge URL (--judge-url or $OPENAI_BASE_URL): open-ended answers not judged\n";
  }
  std::cout << score_markdown(report);
  if (args.count("out")) write_file_atomically(args["out"].as<std::string>(), score_json(report));
  return 0;
}

}  // namespace svqa
