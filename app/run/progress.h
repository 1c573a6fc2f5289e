#pragma once
// Progress of long loops (questions of a run, runs of a grid): "[ 12/40  30% · 4.1 s each · ETA 1m55s]"
// in front of each line the loop logs, and, on a terminal, a bar redrawn in place while a stream
// is encoded. Rates count only what this process did, so a resumed run's ETA is honest.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <thread>

namespace svqa {

class Progress {
 public:
  // `done` of `total` were finished before this process started (resume).
  Progress(int64_t total, int64_t done);
  // Marks one more finished and returns its tag: "[k/N p% · t each · ETA e]".
  std::string step();
  int64_t done() const { return done_; }
  int64_t total() const { return total_; }

 private:
  int64_t total_, done_, done_at_start_;
  std::chrono::steady_clock::time_point start_;
};

// "1m05s", "2h03m", "12.3s".
std::string format_duration(double seconds);

// "[#######.............]" of `width` characters for done / total.
std::string progress_bar(int64_t done, int64_t total, int width);

// Redraws `line` in place on a terminal (carriage return, padded over the previous line).
void redraw_line(std::ostream& out, const std::string& line);

// "2026-11-28 04:31:02 " (local time): the front of a progress line in a log.
std::string timestamp_prefix();

// Progress where stdout is not a terminal (a Slurm or nohup log, a file): timestamped lines, each
// flushed, at most one per `interval_s` over the whole run, so a log shows the run is alive without
// filling up. The first line of a run comes at once.
class ProgressLines {
 public:
  ProgressLines(std::ostream& out, double interval_s) : out_(out), interval_s_(interval_s) {}
  // Writes `line` (timestamped) when `interval_s` has passed since the last one, or none was written.
  void offer(const std::string& line);
  double interval_s() const { return interval_s_; }

 private:
  std::ostream& out_;
  const double interval_s_;
  std::mutex mutex_;
  std::optional<std::chrono::steady_clock::time_point> last_;
};

// While a stream is encoded (its lifetime), offers `lines` the encoding's state when it starts and
// then every interval, from a thread of its own: a chunk that takes minutes, or a frame source that
// blocks, still shows in the log. update() (after each chunk) sets the state it reports.
class EncodingHeartbeat {
 public:
  EncodingHeartbeat(ProgressLines& lines, std::string stream_id, int64_t encoded, int64_t total);
  ~EncodingHeartbeat();
  EncodingHeartbeat(const EncodingHeartbeat&) = delete;
  EncodingHeartbeat& operator=(const EncodingHeartbeat&) = delete;
  void update(int64_t encoded, int64_t total, double fps);

 private:
  std::string line();  // with mutex_ held

  ProgressLines& lines_;
  const std::string stream_id_;
  int64_t encoded_, total_;
  double fps_ = 0;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace svqa
