#pragma once
// Writing one record: predictions.jsonl gets one PredictionRecord per finished question, appended
// and flushed as each finishes, so a killed run loses at most the question in flight and a rerun
// skips what is done. A fault record (PredictionRecord::fault: the question's input could not be
// read) is not done: the next process to open the file takes it out and asks the question again.

#include <fstream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "app/run/prediction_record.h"

namespace svqa {

struct JsonLinesFile;

class PredictionLog {
 public:
  // Opens (creating) `path` and reads its records by the JSON Lines rule (core/io/json_lines.h):
  // a torn last line from a killed run is cut off the file, so its question is answered again.
  // Fault records are taken out (the file rewritten atomically without them) and not done.
  explicit PredictionLog(const std::string& path);

  bool done(const std::string& stream, const std::string& question) const {
    return done_.count({stream, question}) > 0;
  }
  void append(const PredictionRecord& record);
  const std::vector<PredictionRecord>& records() const { return records_; }

 private:
  void drop_faults(const JsonLinesFile& file);  // rewrites the file with records_ not faulted, keeps those

  std::string path_;
  std::ofstream out_;
  std::set<std::pair<std::string, std::string>> done_;
  std::vector<PredictionRecord> records_;
};

}  // namespace svqa
