#include "app/run/progress.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <iomanip>
#include <sstream>
#include <utility>

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

std::string timestamp_prefix() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char text[32];
  return std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S ", &local) ? text : "";
}

void ProgressLines::offer(const std::string& line) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  if (last_ && std::chrono::duration<double>(now - *last_).count() < interval_s_) return;
  last_ = now;
  out_ << timestamp_prefix() << line << "\n" << std::flush;
}

EncodingHeartbeat::EncodingHeartbeat(ProgressLines& lines, std::string stream_id, int64_t encoded, int64_t total)
    : lines_(lines), stream_id_(std::move(stream_id)), encoded_(encoded), total_(total) {
  lines_.offer(line());
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mutex_);
    const auto every = std::chrono::duration<double>(lines_.interval_s());
    while (!wake_.wait_for(lock, every, [this] { return stop_; })) lines_.offer(line());
  });
}

EncodingHeartbeat::~EncodingHeartbeat() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void EncodingHeartbeat::update(int64_t encoded, int64_t total, double fps) {
  const std::lock_guard<std::mutex> lock(mutex_);
  encoded_ = encoded, total_ = total, fps_ = fps;
}

std::string EncodingHeartbeat::line() {
  std::ostringstream s;
  s << "encoding " << stream_id_ << ": " << encoded_ << "/" << total_ << " frames";
  if (fps_ > 0) s << ", " << std::fixed << std::setprecision(1) << fps_ << " fps";
  return s.str();
}

}  // namespace svqa
