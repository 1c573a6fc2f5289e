// svqa_snapshot_bench: what opening a memory snapshot costs (benchmarks/speed/snapshot_bench.py
// drives it). Writes a snapshot of `--frames` frame blocks of a real model's K/V shape (random
// values, the disk tier's layout), then opens it as `svqa run` does — the cache entry checked, its
// log's blocks added to a bank mapped from the file — and reads `--retrieve` blocks in every layer.
// Prints JSON: seconds and RSS growth of the open (and of its first step, the index checked and
// parsed), what the bank holds resident (representatives, positions), RSS growth of the reads, the
// retrieved bytes.

#include <cxxopts.hpp>

#include <chrono>
#include <iostream>

#include "benchmarks/speed/process_memory.h"
#include "core/memory/memory_bank.h"
#include "engine/snapshot/memory_cache.h"
#include "engine/snapshot/snapshot_file.h"
#include "engine/snapshot/snapshot_log.h"

namespace {

struct Shape {
  int64_t frames = 1800, layers = 24, kv_heads = 2, head_dim = 64, tokens = 196, retrieve = 64;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The snapshot's entry: one encode call per frame, each adding that frame's block. Blocks are
// written one at a time, so writing never holds the whole memory.
nlohmann::json write_snapshot(const Shape& s, const svqa::MemoryCache& cache, const nlohmann::json& key) {
  const std::string folder = cache.begin_entry("bench");
  svqa::SnapshotDataWriter data(folder + "memory.kv");
  nlohmann::json events = nlohmann::json::array();
  for (int64_t f = 0; f < s.frames; ++f) {
    svqa::MemoryBank one({s.layers, at::kCPU, -1, ""});
    svqa::KvBlock b;
    b.first_frame = b.last_frame = f;
    b.start_time = b.end_time = 2.0 * static_cast<double>(f);
    b.positions = at::arange(f * s.tokens, (f + 1) * s.tokens).repeat({3, 1});
    for (int64_t l = 0; l < s.layers; ++l) {
      b.keys.push_back(at::randn({s.tokens, s.kv_heads, s.head_dim}).to(at::kHalf));
      b.values.push_back(at::randn({s.tokens, s.kv_heads, s.head_dim}).to(at::kHalf));
      b.representatives.push_back(svqa::mean_key_representative(b.keys.back()));
    }
    one.add(std::move(b));
    events.push_back({{"call", "encode"}, {"first_frame", f}, {"last_frame", f}, {"next_position", 0},
                      {"blocks", svqa::write_blocks(one, 0, data)}});
  }
  const int64_t bytes = data.size();
  data.finish();
  cache.commit_entry("bench", folder, key, events, bytes);
  return events;
}

void add_options(cxxopts::Options& cli, Shape& s, std::string& dir, bool& reuse) {
  cli.add_options()
      ("dir", "folder for the snapshot (a memory cache)", cxxopts::value(dir))
      ("frames", "frame blocks in the snapshot (1800: 1 hour at 0.5 fps)", cxxopts::value(s.frames)->default_value("1800"))
      ("layers", "LLM layers", cxxopts::value(s.layers)->default_value("24"))
      ("kv-heads", "K/V heads", cxxopts::value(s.kv_heads)->default_value("2"))
      ("head-dim", "head dimension", cxxopts::value(s.head_dim)->default_value("64"))
      ("tokens", "tokens per frame", cxxopts::value(s.tokens)->default_value("196"))
      ("retrieve", "blocks read per layer after opening", cxxopts::value(s.retrieve)->default_value("64"))
      ("reuse", "open the snapshot a previous call wrote in --dir (same sizes), writing nothing: RSS figures "
                "of a process that did not just write and free the blocks", cxxopts::value(reuse))
      ("h,help", "this help");
}

void check_sizes(const Shape& s) {
  for (const int64_t v : {s.frames, s.layers, s.kv_heads, s.head_dim, s.tokens})
    if (v < 1 || v > 100000) throw std::invalid_argument("every size must be in [1, 100000]");
  if (s.retrieve < 0 || s.retrieve > s.frames) throw std::invalid_argument("--retrieve: expected 0 to --frames");
}

// The log's blocks added to `bank`, mapped from the snapshot's data file, as a replay adds them;
// returns the bytes of their positions (resident, unlike their K/V).
int64_t add_snapshot_blocks(nlohmann::json& events, const svqa::SnapshotDataReader& data, svqa::MemoryBank& bank) {
  for (auto& e : events) {
    svqa::add_logged_blocks(e.at("blocks"), data, bank);
    e = nullptr;  // as a replay drops each entry of the log once replayed (FinishedLog)
  }
  int64_t positions_bytes = 0;
  for (int64_t id = 0; id < bank.size(); ++id) positions_bytes += bank.info(id).positions.nbytes();
  return positions_bytes;
}

// `--retrieve` blocks spread over the stream read in every layer, as retrieval reads them; returns the bytes read.
int64_t read_retrieved(const Shape& s, svqa::MemoryBank& bank) {
  int64_t read_bytes = 0;
  const int64_t stride = std::max<int64_t>(1, s.frames / std::max<int64_t>(1, s.retrieve));
  for (int64_t l = 0; l < s.layers; ++l)
    for (int64_t i = 0; i < s.retrieve; ++i) {
      const int64_t id = (i * stride) % bank.size();
      const auto shape = bank.key_shape(id, l);
      const at::Tensor k = at::empty(shape, at::kHalf), v = at::empty(shape, at::kHalf);
      bank.read_layer(id, l, k, v);
      read_bytes += 2 * k.numel() * k.element_size();
    }
  return read_bytes;
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options cli("svqa_snapshot_bench", "Open a memory snapshot as svqa run does: seconds and RSS (JSON)");
  Shape s;
  std::string dir;
  bool reuse = false;
  add_options(cli, s, dir, reuse);
  try {
    const auto args = cli.parse(argc, argv);
    if (args.count("help") || dir.empty()) {
      std::cout << cli.help() << "\n";
      return args.count("help") ? 0 : 2;
    }
    check_sizes(s);
    const svqa::MemoryCache cache(dir);
    const nlohmann::json key{{"bench", nlohmann::json{{"frames", s.frames}, {"layers", s.layers}, {"tokens", s.tokens}}}};
    const auto w0 = std::chrono::steady_clock::now();
    if (!reuse) write_snapshot(s, cache, key);
    const double write_s = seconds_since(w0);

    const int64_t rss0 = svqa::process_memory().rss_bytes;
    const auto t0 = std::chrono::steady_clock::now();
    auto found = cache.find("bench", key, std::cerr);
    if (!found) throw std::runtime_error("the snapshot just written was not found");
    const int64_t rss_index = svqa::process_memory().rss_bytes;
    svqa::MemoryBank bank({s.layers, at::kCPU, -1, ""});
    const svqa::SnapshotDataReader data(found->data);
    const int64_t positions_bytes = add_snapshot_blocks(found->events, data, bank);
    const double open_s = seconds_since(t0);
    const int64_t rss1 = svqa::process_memory().rss_bytes;

    const auto r0 = std::chrono::steady_clock::now();
    const int64_t read_bytes = read_retrieved(s, bank);
    const double read_s = seconds_since(r0);
    const int64_t rss2 = svqa::process_memory().rss_bytes;
    const nlohmann::json out{{"frames", s.frames},
                             {"snapshot_bytes", data.file_bytes()},
                             {"write_s", reuse ? nlohmann::json(nullptr) : nlohmann::json(write_s)},
                             {"open_s", open_s},
                             {"open_rss_bytes", rss1 - rss0},
                             {"index_rss_bytes", rss_index - rss0},
                             {"representative_bytes", bank.accounting().representative_bytes},
                             {"positions_bytes", positions_bytes},
                             {"read_s", read_s},
                             {"read_rss_bytes", rss2 - rss1},
                             {"retrieved_bytes", read_bytes}};
    std::cout << out.dump(1) << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "svqa_snapshot_bench: " << e.what() << "\n";
    return 1;
  }
}
