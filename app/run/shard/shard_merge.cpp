#include "app/run/shard/shard_merge.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>

#include "core/io/atomic_file.h"
#include "app/run/run_closing.h"

namespace svqa {
namespace {

namespace fs = std::filesystem;

std::string records_file(const std::string& dir, const StreamShard& shard) { return dir + "/" + shard.stem() + ".jsonl"; }

// Held while the run is merged: flock on DIR/merge.lock, waited for (a merge takes seconds).
class MergeLock {
 public:
  explicit MergeLock(const std::string& dir) : fd_(::open((dir + "/merge.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ < 0 || ::flock(fd_, LOCK_EX) != 0)
      throw std::runtime_error(dir + "/merge.lock: cannot lock: " + std::strerror(errno));
  }
  ~MergeLock() { ::close(fd_); }
  MergeLock(const MergeLock&) = delete;
  MergeLock& operator=(const MergeLock&) = delete;

 private:
  int fd_;
};

// Stream id → its index in the benchmark's order.
std::map<std::string, size_t> stream_indices(const std::vector<Stream>& streams) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < streams.size(); ++i) index.emplace(streams[i].id, i);
  return index;
}

// One shard's records, checked: each of its own streams, each question once.
std::vector<PredictionRecord> checked_shard_records(const std::vector<Stream>& streams, const std::string& dir,
                                                    const StreamShard& shard) {
  const std::string file = records_file(dir, shard);
  if (!fs::exists(file))
    throw std::runtime_error("shard " + shard.name() + " missing: " + file + " not found (run it: --shard " +
                             shard.name() + ")");
  const auto index = stream_indices(streams);
  std::set<std::pair<std::string, std::string>> seen;
  std::vector<PredictionRecord> records = read_prediction_records(file);
  for (const auto& r : records) {
    const auto at = index.find(r.stream);
    if (at != index.end() && !shard.takes(at->second))
      throw std::runtime_error("shard " + shard.name() + ": " + file + " holds stream " + r.stream + ", which is shard " +
                               std::to_string(at->second % shard.count) + "/" + std::to_string(shard.count) +
                               "'s: a stream given to two shards");
    if (!seen.insert({r.stream, r.question_id}).second)
      throw std::runtime_error("shard " + shard.name() + ": " + file + " records " + r.stream + "/" + r.question_id +
                               " twice");
  }
  const ShardProgress progress = shard_progress(streams, dir, shard);
  if (!progress.complete())
    throw std::runtime_error("shard " + shard.name() + " incomplete: " + std::to_string(progress.recorded) + " of " +
                             std::to_string(progress.questions) + " questions recorded in " + file +
                             " (rerun it: --shard " + shard.name() + ")");
  return records;
}

// "a, b, c" of at most `shown` names, then "and N more": one short line whatever the count.
std::string name_list(const std::vector<std::string>& names, size_t shown) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < shown; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > shown) out += " and " + std::to_string(names.size() - shown) + " more";
  return out;
}

}  // namespace

ShardProgress shard_progress(const std::vector<Stream>& streams, const std::string& dir, const StreamShard& shard) {
  ShardProgress progress;
  const std::string file = records_file(dir, shard);
  progress.started = fs::exists(file);
  std::set<std::pair<std::string, std::string>> recorded;
  if (progress.started)
    for (const auto& r : read_prediction_records(file))
      if (!r.faulted()) recorded.insert({r.stream, r.question_id});  // a fault is asked again: not recorded
  for (size_t i = 0; i < streams.size(); ++i) {
    if (!shard.takes(i)) continue;
    for (const auto& q : streams[i].questions) {
      progress.questions += 1;
      progress.recorded += recorded.count({streams[i].id, q.id});
    }
  }
  return progress;
}

std::vector<PredictionRecord> gather_shard_records(const std::vector<Stream>& streams, const std::string& dir,
                                                   int64_t count, std::vector<std::string>& left_out) {
  std::map<std::string, std::vector<PredictionRecord>> by_stream;
  for (int64_t i = 0; i < count; ++i)
    for (auto& r : asked_records(streams, checked_shard_records(streams, dir, {i, count}), left_out))
      by_stream[r.stream].push_back(std::move(r));
  std::vector<PredictionRecord> records;
  for (const auto& stream : streams)
    for (auto& r : by_stream[stream.id]) records.push_back(std::move(r));
  return records;
}

void merge_run(const ExperimentConfig& cfg, const Registries& registries, const std::string& dir, std::ostream& log) {
  const int64_t count = recorded_shard_count(dir);
  if (!count) throw std::runtime_error(dir + ": no stream shards to merge (no records in " + dir + "/shards)");
  const ComponentChoice& choice = *cfg.component("benchmark");
  const std::unique_ptr<Benchmark> benchmark = registries.benchmark.create(choice.type, choice.options);
  const std::vector<Stream> streams = benchmark->streams();
  const MergeLock lock(dir);
  std::vector<std::string> left_out;
  const std::vector<PredictionRecord> records = gather_shard_records(streams, dir, count, left_out);
  log_left_out(left_out, log);
  std::string lines;
  for (const auto& r : records) lines += to_json(r).dump() + "\n";
  write_file_atomically(dir + "/predictions.jsonl", lines);
  RunTotals totals;  // encode rates stay 0: each shard's own are in its log
  for (const auto& s : streams) totals.questions += static_cast<int64_t>(s.questions.size());
  write_metrics(dir, cfg.header.name, totals, records);
  RunJudge judge = make_run_judge(cfg.header.judge, streams, dir);
  write_scores(dir, choice.type, *benchmark, streams, records, judge, log);
  print_run_table(records, log);
  log << "merged " << count << " stream shards: " << records.size() << " records in " << dir << "/predictions.jsonl\n";
}

bool merge_if_complete(const ExperimentConfig& cfg, const Registries& registries, const std::string& dir,
                       int64_t count, std::ostream& log) {
  const ComponentChoice& choice = *cfg.component("benchmark");
  const std::vector<Stream> streams = registries.benchmark.create(choice.type, choice.options)->streams();
  std::vector<std::string> waiting;
  for (int64_t i = 0; i < count; ++i) {
    const StreamShard shard{i, count};
    if (!shard_progress(streams, dir, shard).complete()) waiting.push_back(shard.name());
  }
  if (!waiting.empty()) {
    log << "stream shards still to finish: " << name_list(waiting, 8) << " (the last to finish merges; or svqa merge "
        << dir << ")\n";
    return false;
  }
  merge_run(cfg, registries, dir, log);
  return true;
}

}  // namespace svqa
