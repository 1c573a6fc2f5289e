#include "core/run/progress.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace svqa {

Progress::Progress(int64_t total, int64_t done)
    : total_(total), done_(done), done_at_start_(done), start_(std::chrono::steady_clock::now()) {}

std::string Progress::step() {
  ++done_;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const int64_t here = done_ - done_at_start_;
  const double each = elapsed / static_cast<double>(std::max<int64_t>(here, 1));
  const int width = static_cast<int>(std::to_string(total_).size());
  std::ostringstream s;
  s << "[" << std::setw(width) << done_ << "/" << total_ << " " << std::setw(3)
    << (total_ ? done_ * 100 / total_ : 100) << "% · " << format_duration(each) << " each · ETA "
    << format_duration(each * static_cast<double>(std::max<int64_t>(total_ - done_, 0))) << "]";
  return s.str();
}

std::string format_duration(double seconds) {
  std::ostringstream s;
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  if (seconds < 60) {
    s << std::fixed << std::setprecision(seconds < 10 ? 1 : 0) << seconds << "s";
    return s.str();
  }
  const auto whole = static_cast<int64_t>(std::llround(seconds));
  if (whole < 3600)
    s << whole / 60 << "m" << std::setw(2) << std::setfill('0') << whole % 60 << "s";
  else
    s << whole / 3600 << "h" << std::setw(2) << std::setfill('0') << (whole % 3600) / 60 << "m";
  return s.str();
}

std::string progress_bar(int64_t done, int64_t total, int width) {
  const int filled = total > 0 ? static_cast<int>(std::min<int64_t>(done, total) * width / total) : width;
  return "[" + std::string(static_cast<size_t>(filled), '#') + std::string(static_cast<size_t>(width - filled), '.') + "]";
}

void redraw_line(std::ostream& out, const std::string& line) {
  out << "\r" << line << "\033[K" << std::flush;  // erase what a longer previous line left
}

}  // namespace svqa
