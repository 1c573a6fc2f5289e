#include "app/run/prediction_log.h"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>

#include <filesystem>
#include <stdexcept>

#include "core/io/atomic_file.h"
#include "core/io/json_lines.h"

namespace svqa {
namespace {

// Test hooks: SVQA_KILL_AFTER_RECORDS=N makes the process SIGKILL itself right after its N-th record
// is on disk, so a test kills a run at a known point instead of racing a timer;
// SVQA_STOP_AFTER_RECORDS=N makes it SIGSTOP itself there, so a test changes files between two
// questions (a spill block, another run sharing the spill folder) and then sends SIGCONT.
void signal_if_asked(int64_t written_by_process) {
  static const char* const kill_at = std::getenv("SVQA_KILL_AFTER_RECORDS");
  static const char* const stop_at = std::getenv("SVQA_STOP_AFTER_RECORDS");
  if (kill_at && written_by_process == std::atoll(kill_at)) std::raise(SIGKILL);
  if (stop_at && written_by_process == std::atoll(stop_at)) std::raise(SIGSTOP);
}

}  // namespace

PredictionLog::PredictionLog(const std::string& path) : path_(path) {
  namespace fs = std::filesystem;
  if (fs::path(path).has_parent_path()) fs::create_directories(fs::path(path).parent_path());
  bool add_newline = false;
  if (fs::exists(path)) {
    try {
      const JsonLinesFile file = read_json_lines(path);
      records_ = prediction_records(file, path);
      if (std::any_of(records_.begin(), records_.end(), [](const PredictionRecord& r) { return r.faulted(); })) {
        drop_faults(file);
      } else {
        fs::resize_file(path, file.kept_bytes);
        add_newline = file.last_line_unterminated;
      }
      for (const auto& r : records_) done_.insert({r.stream, r.question_id});
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(std::string(e.what()) + "; move the file away to start over");
    }
  }
  out_.open(path, std::ios::app | std::ios::binary);
  if (!out_) throw std::runtime_error(path + ": cannot open for appending");
  if (add_newline) out_ << '\n';
}

void PredictionLog::drop_faults(const JsonLinesFile& file) {
  std::string kept;  // the lines as written (svqa writes each record as its JSON's dump)
  std::vector<PredictionRecord> answers;
  for (size_t i = 0; i < records_.size(); ++i)
    if (!records_[i].faulted()) kept += file.lines[i].value.dump() + "\n", answers.push_back(std::move(records_[i]));
  write_file_atomically(path_, kept);
  records_ = std::move(answers);
}

void PredictionLog::append(const PredictionRecord& record) {
  out_ << to_json(record).dump() << '\n';
  out_.flush();
  if (!out_) throw std::runtime_error(path_ + ": write failed");
  done_.insert({record.stream, record.question_id});
  records_.push_back(record);
  static int64_t written_by_process = 0;
  signal_if_asked(++written_by_process);
}

}  // namespace svqa
