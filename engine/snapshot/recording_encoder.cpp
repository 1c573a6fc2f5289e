#include "engine/snapshot/recording_encoder.h"

#include <csignal>
#include <cstdlib>

#include "engine/snapshot/memory_cache.h"
#include "engine/snapshot/snapshot_log.h"

namespace svqa {
namespace {

// Test hooks, as SVQA_KILL_AFTER_RECORDS (app/run/prediction_log.cpp): SVQA_KILL_AFTER_SNAPSHOT_CALLS=N
// makes the process SIGKILL itself right after the N-th encoder call it logged, so a test kills an
// encoder mid-stream at a known point instead of racing a timer; SVQA_STOP_AFTER_SNAPSHOT_CALLS=N
// makes it SIGSTOP itself there (holding the entry's lock), for a test to start a second process;
// SVQA_STOP_AFTER_SNAPSHOT_QUESTION=ID stops it right after it logged the call telling the
// encoder of question ID.
void signal_if_asked(size_t logged, const nlohmann::json& event) {
  static const char* const kill_at = std::getenv("SVQA_KILL_AFTER_SNAPSHOT_CALLS");
  static const char* const stop_at = std::getenv("SVQA_STOP_AFTER_SNAPSHOT_CALLS");
  static const char* const stop_question = std::getenv("SVQA_STOP_AFTER_SNAPSHOT_QUESTION");
  if (kill_at && logged == static_cast<size_t>(std::atoll(kill_at))) std::raise(SIGKILL);
  if (stop_at && logged == static_cast<size_t>(std::atoll(stop_at))) std::raise(SIGSTOP);
  if (stop_question && event.value("question", "") == stop_question) std::raise(SIGSTOP);
}

}  // namespace

RecordingEncoder::RecordingEncoder(EncodingStrategy& inner, const std::string& folder, const nlohmann::json& material)
    : EncoderWrapper(inner), data_(folder + MemoryCache::kDataFile), live_(folder + MemoryCache::kLiveLog) {
  live_.append({{"key", material}});
}

void RecordingEncoder::log(nlohmann::json event, const MemoryBank& bank, int64_t first_block) {
  event["blocks"] = write_blocks(bank, first_block, data_);
  event["next_position"] = inner().next_position();
  data_.sync();  // the blocks on disk before the record naming them is visible
  live_.append(event);
  events_.push_back(std::move(event));
  signal_if_asked(events_.size(), events_.back());
}

void RecordingEncoder::begin_stream(Backbone& backbone, const std::vector<int64_t>& sink_ids, MemoryBank& bank) {
  const int64_t first = bank.size();
  inner().begin_stream(backbone, sink_ids, bank);
  log({{"call", "begin_stream"}, {"sinks", write_sinks(inner().sinks(), data_)}}, bank, first);
}

void RecordingEncoder::encode(Backbone& backbone, const std::vector<VisualUnit>& units, MemoryBank& bank) {
  const int64_t first = bank.size();
  inner().encode(backbone, units, bank);
  log({{"call", "encode"},
       {"first_frame", units.empty() ? -1 : units.front().first_frame},
       {"last_frame", units.empty() ? -1 : units.back().last_frame}},
      bank, first);
}

// Logged as "before_question", the name snapshots on disk give this call.
const MemoryBank* RecordingEncoder::prepare_for_question(Backbone& backbone, const QuestionInfo& question,
                                                         MemoryBank& bank) {
  const int64_t first = bank.size();
  const MemoryBank* own = inner().prepare_for_question(backbone, question, bank);
  nlohmann::json fields = nlohmann::json::object();  // answering does not change the encoder: these are the record's
  inner().add_record_fields(fields);
  log({{"call", "before_question"}, {"question", question.id}, {"time", question.time}, {"fields", fields}}, bank,
      first);
  return own;
}

nlohmann::json RecordingEncoder::finish() {
  data_.finish();
  live_.append({{"end", true}});
  return events_;
}

}  // namespace svqa
