// svqa_bench: the speed harness's measuring half. Runs one ReKV (or MuKV) stream on an export and prints
// its measurements as JSON; benchmarks/speed/bench.py makes the export, runs this, times Hugging
// Face re-prefill and prints the table.

#include <cxxopts.hpp>

#include <filesystem>
#include <iostream>
#include <stdexcept>

#include "benchmarks/speed/stream_bench.h"
#include "core/config/runtime.h"
#include "core/io/atomic_file.h"

int main(int argc, char** argv) {
  cxxopts::Options cli("svqa_bench", "Time a ReKV stream on an export: encode, time to first token, memory (JSON)");
  svqa::StreamBenchOptions o;
  int64_t threads = 2;
  std::string json_path;
  cli.add_options()
      ("export", "export directory (python -m models.export)", cxxopts::value(o.export_dir))
      ("method", "rekv, mukv (MuKV's paper configuration) or infinipot_v (its preset; memory_as_is); --n-local and --retrieve apply to rekv",
       cxxopts::value(o.method)->default_value(o.method))
      ("device", "torch device", cxxopts::value(o.device)->default_value(o.device))
      ("dtype", "float32, float16 or bfloat16 (default: the export's)", cxxopts::value(o.dtype))
      ("threads", "CPU threads", cxxopts::value(threads)->default_value("2"))
      ("frames", "frames in the stream", cxxopts::value(o.frames)->default_value("256"))
      ("fps", "frame rate of the stream", cxxopts::value(o.fps)->default_value("0.5"))
      ("n-local", "ReKV window in tokens", cxxopts::value(o.n_local)->default_value("15000"))
      ("retrieve", "ReKV r: blocks retrieved per layer", cxxopts::value(o.retrieve_size)->default_value("64"))
      ("questions", "ask after these frame counts", cxxopts::value(o.questions)->default_value("16,64,256"))
      ("ttft-repeats", "times each question is asked (fastest counts)", cxxopts::value(o.ttft_repeats)->default_value("3"))
      ("ram-budget-mb", "bank RAM before spilling to disk (< 0: never)", cxxopts::value(o.ram_budget_mb)->default_value("-1"))
      ("spill-dir", "directory of the disk tier", cxxopts::value(o.spill_dir))
      ("rss-every", "sample resident memory every N frames", cxxopts::value(o.rss_every)->default_value("16"))
      ("no-floor", "skip the matmul floors")
      ("vision-memory", "instead of the stream: the resident memory of a vision call on 1 unit, then on N frames",
       cxxopts::value(o.vision_memory_frames)->default_value("0"))
      ("json", "write the JSON here instead of stdout", cxxopts::value(json_path))
      ("h,help", "this help");
  try {
    const auto args = cli.parse(argc, argv);
    if (args.count("help") || !args.count("export")) {
      std::cout << cli.help() << "\n";
      return args.count("help") ? 0 : 2;
    }
    if (!args.unmatched().empty()) throw std::invalid_argument("unexpected argument '" + args.unmatched()[0] + "'");
    o.floor = !args.count("no-floor");
    svqa::check_stream_bench_options(o);
    if (threads < 0 || threads > 1024) throw std::invalid_argument("--threads: expected 0 to 1024, got " + std::to_string(threads));
    // Checked before the run, so a path that cannot take the file fails now, not after minutes.
    if (!json_path.empty() && std::filesystem::is_directory(json_path))
      throw std::invalid_argument("--json " + json_path + ": is a directory, expected the file to write");
    svqa::RuntimeOptions runtime;
    runtime.threads = threads;
    svqa::apply_runtime(runtime);
    const auto result = svqa::run_stream_bench(o).dump(1);
    if (json_path.empty()) {
      std::cout << result << "\n";
    } else {
      svqa::write_file_atomically(json_path, result + "\n");  // throws naming the path
    }
  } catch (const std::exception& e) {
    std::cerr << "svqa_bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
