#pragma once
// predictions.jsonl: one JSON record per finished question, appended and flushed as each finishes,
// so a killed run loses at most the question in flight and a rerun skips what is done.

#include <fstream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace svqa {

class PredictionLog {
 public:
  // Opens (creating) `path`; a torn last line from a killed run is cut off first.
  explicit PredictionLog(const std::string& path);

  bool done(const std::string& stream, const std::string& question) const {
    return done_.count({stream, question}) > 0;
  }
  void append(const nlohmann::json& record);  // needs "stream" and "question_id"
  const std::vector<nlohmann::json>& records() const { return records_; }

 private:
  std::string path_;
  std::ofstream out_;
  std::set<std::pair<std::string, std::string>> done_;
  std::vector<nlohmann::json> records_;
};

}  // namespace svqa
