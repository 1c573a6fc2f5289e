#include "core/run/prediction_log.h"

#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include <filesystem>
#include <stdexcept>

namespace svqa {
namespace {

// Test hook: SVQA_KILL_AFTER_RECORDS=N makes the process SIGKILL itself right after its N-th record
// is on disk, so a test kills a run at a known point instead of racing a timer.
void kill_if_asked(int64_t written_by_process) {
  static const char* const limit = std::getenv("SVQA_KILL_AFTER_RECORDS");
  if (limit && written_by_process == std::atoll(limit)) std::raise(SIGKILL);
}

}  // namespace

PredictionLog::PredictionLog(const std::string& path) : path_(path) {
  namespace fs = std::filesystem;
  if (fs::path(path).has_parent_path()) fs::create_directories(fs::path(path).parent_path());
  std::uintmax_t keep = 0;
  if (fs::exists(path)) {
    std::ifstream in(path, std::ios::binary);
    std::string line;
    std::uintmax_t offset = 0;
    while (std::getline(in, line)) {
      const bool complete = !in.eof();  // a line without its newline was cut by a kill
      offset += line.size() + (complete ? 1 : 0);
      if (!complete) break;
      try {
        auto record = nlohmann::json::parse(line);
        done_.insert({record.at("stream").get<std::string>(), record.at("question_id").get<std::string>()});
        records_.push_back(std::move(record));
        keep = offset;
      } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(path + ": line " + std::to_string(records_.size() + 1) +
                                 " is not a prediction record (" + e.what() + "); move the file away to start over");
      }
    }
    fs::resize_file(path, keep);
  }
  out_.open(path, std::ios::app | std::ios::binary);
  if (!out_) throw std::runtime_error(path + ": cannot open for appending");
}

void PredictionLog::append(const nlohmann::json& record) {
  out_ << record.dump() << '\n';
  out_.flush();
  if (!out_) throw std::runtime_error(path_ + ": write failed");
  done_.insert({record.at("stream").get<std::string>(), record.at("question_id").get<std::string>()});
  records_.push_back(record);
  static int64_t written_by_process = 0;
  kill_if_asked(++written_by_process);
}

}  // namespace svqa
