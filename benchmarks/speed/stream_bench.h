#pragma once
// One measured stream on an export: a synthetic stream of frames made as it advances, encoded
// frame by frame with ReKV's sliding window (or MuKV's multi-grain blocks), questions at given
// frame counts answered with internal (or MuKV's) retrieval; per-frame encode times, time to first
// token split into retrieve / gather / prefill, resident memory over time, and for ReKV the
// matrix-multiply floor of every frame.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace svqa {

struct StreamBenchOptions {
  std::string export_dir;
  std::string method = "rekv";  // rekv (n_local, retrieve_size below) | mukv (MuKV's paper configuration) | infinipot_v (its preset)
  std::string device = "cpu";
  std::string dtype;  // empty: the export's
  int64_t frames = 256;
  double fps = 0.5;                       // frame i is at i / fps seconds
  int64_t n_local = 15000;                // ReKV's window, tokens
  int64_t retrieve_size = 64;             // ReKV's r
  std::vector<int64_t> questions;  // ask after this many frames (svqa_bench: 16, 64, 256; cxxopts appends to what is here)
  int ttft_repeats = 3;                   // each question asked this often; the fastest counts
  int64_t ram_budget_mb = -1;             // bank RAM before spilling to disk; < 0: never
  std::string spill_dir;
  int64_t rss_every = 16;                 // sample resident memory every this many frames
  bool floor = true;                      // measure the matmul floors of the LLM and the vision tower (after the stream)
  int64_t vision_memory_frames = 0;       // > 0: only the resident memory of a vision call on 1 unit and on this many frames
};

// Throws std::invalid_argument "--flag: expected ..., got ..." for the first option out of its bounds
// (frames in [1, 10^6], fps in (0, 1000], dtype float32/float16/bfloat16, ...), before anything loads.
void check_stream_bench_options(const StreamBenchOptions& options);

// The measurements as JSON (see bench.py for the fields it reads). Checks the options first.
nlohmann::json run_stream_bench(const StreamBenchOptions& options);

}  // namespace svqa
