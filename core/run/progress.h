#pragma once
// Progress of long loops (questions of a run, runs of a grid): "[ 12/40  30% · 4.1 s each · ETA 1m55s]"
// in front of each line the loop logs, and, on a terminal, a bar redrawn in place while a stream
// is encoded. Rates count only what this process did, so a resumed run's ETA is honest.

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>

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

}  // namespace svqa
