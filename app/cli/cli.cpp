#include "app/cli/cli.h"

// cxxopts splits vector values on ',' by default; `--set k=[1,2]` must stay whole.
#define CXXOPTS_VECTOR_DELIMITER '\x1f'
#include <cxxopts.hpp>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>

#include "app/cli/cli_commands.h"
#include "app/cli/run_on_devices.h"
#include "app/cli/run_task.h"
#include "core/config/config_node.h"
#include "core/config/experiment.h"
#include "core/config/grid.h"
#include "core/config/path_check.h"
#include "app/run/run_folder.h"
#include "app/run/stream_runner.h"
#include "models/tokenizers/tokenizer.h"
#include "models/loading/torch_error.h"
#include "core/io/json_text.h"

#ifndef SVQA_VERSION
#define SVQA_VERSION "unknown"
#endif

namespace svqa {
namespace {

constexpr int kOk = 0;
constexpr int kRuntimeFailure = 1;
constexpr int kUsageOrConfigError = 2;

constexpr const char* kUsage = R"(usage: svqa <command> [options]

commands:
  run EXP.yaml [--set KEY=VALUE]... [--out DIR]    run an experiment
  encode EXP.yaml [--set KEY=VALUE]...             encode its streams into memory.cache, answering nothing
  run EXP.yaml --shard i/N                         answer one stream shard of it (the last merges)
  run|grid EXP.yaml --devices 0,1,...              one stream shard per local device, merged (no Slurm)
  grid EXP.yaml [--shard i/N] [--list] [--out DIR] run every run of an experiment's grid (or one shard)
  merge RUN | EXP.yaml                             merge a run's stream shards and score it (or a grid's)
  submit EXP.yaml [--dry-run | --status]           run a grid as a Slurm array job, merged by a dependent job
  validate EXP.yaml [--set KEY=VALUE]... [--dump]  check an experiment (and the paths it names) without running it
  list [NAME] [--json]                             every experiment key and component with its options
  tokenize TOKENIZER [--decode]                    JSON lines on stdin: strings → id lists (or back)
  probe --export DIR --frames SRC --prompt TEXT    run an export with everything in context, print the answer
  frames SOURCE [--fps F] [--preprocess MANIFEST]  frame count, size, timestamps (JSON); --out writes .npy
  make-video OUT.avi [--seconds S] [--fps F]       write the synthetic stream the demo runs on
  embed --model DIR (--frames SRC | --text TEXT)   image-text embeddings (external retrieval); --out writes .npy
  benchmark inspect NAME ANNOTATIONS               load an annotation file: counts, categories, every problem
  benchmark check NAME ANNOTATIONS --video-root D  its videos present, missing, unreadable; duration, frames
  score NAME ANNOTATIONS PREDICTIONS.jsonl         official accuracy table of any system's predictions; --out JSON
  export-results RUN                               a run's predictions as OVO-Bench's / StreamingBench's results file
  report DIR... [--out DIR]                        compare runs: report.md/.csv/.tex, figures (PDF, SVG, PNG)
  cache ls|rm|gc DIR                               a memory cache's snapshots: list, remove, bound by size (LRU)
  --version                                        print the version

`svqa <command> --help` shows a command's options.
)";

struct ExperimentArgs {
  std::string path;
  std::vector<std::string> overrides;
  cxxopts::ParseResult result;
};

// Parses `svqa <command> EXP.yaml [--set ...] <extra options>`; returns nullopt after --help.
std::optional<ExperimentArgs> parse_experiment_args(cxxopts::Options& options, int argc, const char* const* argv) {
  options.add_options()("experiment", "experiment YAML file", cxxopts::value<std::string>())(
      "set", "override one key, e.g. --set retrieval.options.retrieve_size=32 (repeatable)",
      cxxopts::value<std::vector<std::string>>())("h,help", "show this help");
  options.parse_positional({"experiment"});
  options.positional_help("EXP.yaml");
  ExperimentArgs args{"", {}, options.parse(argc, argv)};
  if (args.result.count("help")) {
    std::cout << options.help();
    return std::nullopt;
  }
  if (!args.result.count("experiment")) throw UsageError("missing the experiment file (EXP.yaml)");
  if (!args.result.unmatched().empty()) throw UsageError("unexpected argument '" + args.result.unmatched()[0] + "'");
  args.path = args.result["experiment"].as<std::string>();
  if (args.result.count("set")) args.overrides = args.result["set"].as<std::vector<std::string>>();
  return args;
}

std::string component_summary(const ExperimentConfig& cfg, const Registries& registries) {
  std::string out;
  for (const auto& [section, _] : registries.sections()) {
    const ComponentChoice* c = cfg.component(section);
    out += (out.empty() ? "" : ", ") + section + ": " + (c ? c->type : "-");
  }
  return out;
}

// --dump: "all" prints every resolved value (defaults included: what a run's config.yaml records),
// "set" only what the files and --set give.
std::string dump_text(const ExperimentConfig& cfg, const std::string& which) {
  if (which != "all" && which != "set") throw UsageError("--dump: expected all or set, got '" + which + "'");
  return to_yaml(which == "set" ? cfg.resolved : cfg.complete);
}

int cmd_validate(int argc, const char* const* argv, const Registries& registries) {
  cxxopts::Options options("svqa validate", "Load, resolve and check an experiment without running it.");
  options.add_options()("dump",
                        "print the resolved config: =all (the default) every value a run uses, defaults included; "
                        "=set only what the files and --set give",
                        cxxopts::value<std::string>()->implicit_value("all"))(
      "no-paths", "do not check that the paths it names (export, annotations, video root, expert) exist: a config "
                  "for data not here yet");
  auto args = parse_experiment_args(options, argc, argv);
  if (!args) return kOk;
  const bool dump = args->result.count("dump") > 0;
  const std::string which = dump ? args->result["dump"].as<std::string>() : "";
  const bool check_paths = !args->result.count("no-paths");
  ExperimentConfig cfg = resolve_experiment(args->path, args->overrides, registries.sections());
  if (has_grid(cfg.resolved)) {
    const auto runs = expand_grid(cfg.resolved, args->path);
    const auto configs = validate_grid_runs(runs, args->path, registries.sections());  // as svqa grid does
    if (check_paths)
      for (const auto& c : configs) require_paths(c, registries.sections());
    if (dump)
      for (size_t i = 0; i < runs.size(); ++i) std::cout << "# " << runs[i].directory() << "\n" << dump_text(configs[i], which) << "\n";
    else
      std::cout << args->path << ": ok: grid of " << runs.size() << " runs (svqa grid " << args->path << " --list)\n";
    return kOk;
  }
  if (check_paths) require_paths(cfg, registries.sections());
  if (dump) {
    std::cout << dump_text(cfg, which);
  } else {
    std::cout << args->path << ": ok: experiment '" << cfg.header.name << "' ("
              << component_summary(cfg, registries) << ")\n";
  }
  return kOk;
}

// svqa run and svqa encode build every component: each section must be there.
void require_every_section(const ExperimentConfig& cfg, const std::string& path, const Registries& registries) {
  ErrorList missing;
  for (const auto& [section, registry] : registries.sections())
    if (!cfg.component(section))
      missing.add({path, 0, 0}, section,
                  "missing section (svqa run needs `" + section + ": {type: NAME}`; `svqa list` shows each " +
                      registry->kind() + ")");
  missing.throw_if_any();
}

// svqa run --devices: each child is `svqa run EXP --shard i/N` with this command's --out and --set.
int run_devices_option(const ExperimentArgs& args, const ExperimentConfig& cfg, const std::string& dir) {
  if (args.result.count("shard")) throw UsageError("--devices gives each device its stream shard: no --shard with it");
  std::vector<std::string> child = {args.path};
  if (args.result.count("out")) child.insert(child.end(), {"--out", args.result["out"].as<std::string>()});
  for (const auto& o : args.overrides) child.insert(child.end(), {"--set", o});
  const int status = run_on_devices(args.result["devices"].as<std::string>(), {"run", child, {cfg}});
  if (status == kOk) std::cout << "\nresults: " << dir << "/ (config.yaml, predictions.jsonl, metrics.json, scores.json)\n";
  return status;
}

int cmd_run(int argc, const char* const* argv, const Registries& registries) {
  cxxopts::Options options("svqa run", "Run an experiment.");
  options.add_options()("out", "results root (default: the experiment's output.dir)", cxxopts::value<std::string>())(
      "shard", "i/N: answer only the streams with index % N == i, into DIR/shards/ (the last shard to finish merges)",
      cxxopts::value<std::string>())(
      "devices", "LIST: one stream shard per device, each in a child svqa, e.g. 0,1,2,3 (CUDA) or cpu,cpu",
      cxxopts::value<std::string>());
  auto args = parse_experiment_args(options, argc, argv);
  if (!args) return kOk;
  ExperimentConfig cfg = resolve_experiment(args->path, args->overrides, registries.sections());
  if (has_grid(cfg.resolved)) throw UsageError(args->path + " has a grid: section; run it with `svqa grid " + args->path + "`");
  require_every_section(cfg, args->path, registries);
  require_paths(cfg, registries.sections());
  cfg.resolved.erase("slurm");  // where the run goes, not what it computes: not in its config.yaml
  cfg.complete.erase("slurm");
  const StreamShard shard = args->result.count("shard") ? shard_option(args->result["shard"].as<std::string>()) : StreamShard{};

  const std::string root = args->result.count("out") ? args->result["out"].as<std::string>() : cfg.header.output.dir;
  const std::string dir = (std::filesystem::path(root) / cfg.header.name).string();
  if (args->result.count("devices")) return run_devices_option(*args, cfg, dir);
  const int errors = run_task(cfg, registries, dir, shard, "svqa run " + args->path);
  std::cout << "\nresults: " << dir << "/ (config.yaml, predictions.jsonl, metrics.json, scores.json)"
            << (errors ? "; " + std::to_string(errors) + " questions errored, see predictions.jsonl" : std::string()) << "\n";
  return kOk;
}

// svqa encode: the streams' memory into memory.cache, nothing answered (ReKV's analysis process).
int cmd_encode(int argc, const char* const* argv, const Registries& registries) {
  cxxopts::Options options("svqa encode", "Encode an experiment's streams into its memory.cache, answering nothing.");
  auto args = parse_experiment_args(options, argc, argv);
  if (!args) return kOk;
  ExperimentConfig cfg = resolve_experiment(args->path, args->overrides, registries.sections());
  if (has_grid(cfg.resolved)) throw UsageError(args->path + " has a grid: section; encode one of its runs' files");
  require_every_section(cfg, args->path, registries);
  require_paths(cfg, registries.sections());
  if (cfg.header.memory.cache.empty())
    throw UsageError(args->path + ": memory.cache is not set: svqa encode writes streams' memory there");
  // Spill files of the streams being encoded: a folder of this process inside the cache, removed
  // after; those of encoders killed before (their pid no live process) go first.
  std::error_code ignored;
  for (const auto& e : std::filesystem::directory_iterator(cfg.header.memory.cache, ignored)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("encoding.", 0) == 0 && ::kill(std::atoi(name.c_str() + 9), 0) != 0 && errno == ESRCH)
      std::filesystem::remove_all(e.path(), ignored);
  }
  const std::string scratch = cfg.header.memory.cache + "/encoding." + std::to_string(::getpid());
  struct RemovedAtExit {  // however the encoding ends: a failed one leaves no folder behind either
    std::string dir;
    ~RemovedAtExit() {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  } removed{scratch};
  apply_runtime(cfg.header.runtime);
  at::InferenceMode inference;
  encode_streams(cfg, registries, scratch, std::cout);
  std::cout << "memory: " << cfg.header.memory.cache << "/\n";
  return kOk;
}

// Reads one JSON value per stdin line: a string to encode, or (--decode) a list of ids.
int cmd_tokenize(int argc, const char* const* argv) {
  cxxopts::Options options("svqa tokenize", "Tokenize JSON strings from stdin, one per line, as JSON id lists.");
  options.add_options()("tokenizer", "tokenizer.json, a SentencePiece .model, or a directory holding one",
                        cxxopts::value<std::string>())(
      "decode", "read id lists, write strings")("h,help", "show this help");
  options.parse_positional({"tokenizer"});
  options.positional_help("TOKENIZER");
  auto result = options.parse(argc, argv);
  if (result.count("help")) {
    std::cout << options.help();
    return kOk;
  }
  if (!result.count("tokenizer")) throw UsageError("missing the tokenizer (tokenizer.json, .model, or their directory)");
  const auto tokenizer = load_tokenizer(result["tokenizer"].as<std::string>());
  const bool decode = result.count("decode") > 0;
  std::string line;
  for (size_t n = 1; std::getline(std::cin, line); ++n) {
    nlohmann::json in;
    try {
      in = parse_json_text(line);
    } catch (const std::runtime_error& e) {
      throw UsageError("stdin line " + std::to_string(n) + ": " + e.what());
    }
    if (decode) std::cout << nlohmann::json(tokenizer->decode(in.get<std::vector<int64_t>>())).dump() << "\n";
    else std::cout << nlohmann::json(tokenizer->encode(in.get<std::string>())).dump() << "\n";
  }
  return kOk;
}

}  // namespace

int run_cli(int argc, const char* const* argv, const Registries& registries) {
  const std::string command = argc > 1 ? argv[1] : "";
  try {
    if (command == "--version" || command == "version") {
      std::cout << "svqa " << SVQA_VERSION << "\n";
      return kOk;
    }
    if (command == "-h" || command == "--help" || command == "help") {
      std::cout << kUsage;
      return kOk;
    }
    // Each command parses its own options from argv[1..] (argv[1] stands in as the program name).
    if (command == "validate") return cmd_validate(argc - 1, argv + 1, registries);
    if (command == "run") return cmd_run(argc - 1, argv + 1, registries);
    if (command == "encode") return cmd_encode(argc - 1, argv + 1, registries);
    if (command == "grid") return cmd_grid(argc - 1, argv + 1, registries);
    if (command == "merge") return cmd_merge(argc - 1, argv + 1, registries);
    if (command == "submit") return cmd_submit(argc - 1, argv + 1, registries);
    if (command == "list") return cmd_list(argc - 1, argv + 1, registries);
    if (command == "tokenize") return cmd_tokenize(argc - 1, argv + 1);
    if (command == "probe") return cmd_probe(argc - 1, argv + 1);
    if (command == "make-video") return cmd_make_video(argc - 1, argv + 1);
    if (command == "frames") return cmd_frames(argc - 1, argv + 1);
    if (command == "embed") return cmd_embed(argc - 1, argv + 1);
    if (command == "cache") return cmd_cache(argc - 1, argv + 1);
    if (command == "benchmark") return cmd_benchmark(argc - 1, argv + 1, registries);
    if (command == "score") return cmd_score(argc - 1, argv + 1, registries);
    if (command == "report") return cmd_report(argc - 1, argv + 1, registries);
    if (command == "export-results") return cmd_export_results(argc - 1, argv + 1, registries);
    throw UsageError(command.empty() ? "missing command"
                                     : "unknown command '" + command + "'" +
                                           did_you_mean(command, {"run", "encode", "grid", "merge", "submit", "validate", "list", "tokenize", "probe",
                                                                  "frames", "make-video", "embed", "benchmark", "score", "report", "export-results", "cache", "version"}));
  } catch (const ConfigError& e) {
    for (const auto& line : e.lines()) std::cerr << line << "\n";
    return kUsageOrConfigError;
  } catch (const UsageError& e) {
    std::cerr << "svqa " << command << ": " << e.what() << "\n" << (command.empty() ? kUsage : "");
    return kUsageOrConfigError;
  } catch (const cxxopts::exceptions::exception& e) {
    std::cerr << "svqa " << command << ": " << e.what() << " (see svqa " << command << " --help)\n";
    return kUsageOrConfigError;
  } catch (const c10::Error& e) {  // what() would add a 15–30 line C++ backtrace
    std::cerr << "svqa " << command << ": error: " << torch_error_line(e) << "\n";
    return kRuntimeFailure;
  } catch (const std::exception& e) {
    std::cerr << "svqa " << command << ": error: " << e.what() << "\n";
    return kRuntimeFailure;
  }
}

}  // namespace svqa
