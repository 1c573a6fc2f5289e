#pragma once
// An encoding strategy that runs another one and logs each call into a memory snapshot as it
// goes (snapshot_log.h): the blocks a call added go to the snapshot's data file at once, so RAM
// holds no second copy of the memory, and the call's record is appended to the live log
// (live_log.h) once they are on disk, for a run reading along. Everything else is the wrapped
// strategy's (EncoderWrapper), its traits too (the registration's).

#include <string>

#include <nlohmann/json.hpp>

#include "engine/strategy.h"
#include "engine/snapshot/live_log.h"
#include "engine/snapshot/snapshot_file.h"

namespace svqa {

class RecordingEncoder final : public EncoderWrapper {
 public:
  // Writes into `folder` (MemoryCache::begin_entry's); the live log begins with `material`.
  RecordingEncoder(EncodingStrategy& inner, const std::string& folder, const nlohmann::json& material);

  // The calls that change the bank, each logged; the rest is EncoderWrapper's.
  void begin_stream(Backbone& backbone, const std::vector<int64_t>& sink_ids, MemoryBank& bank) override;
  void encode(Backbone& backbone, const std::vector<VisualUnit>& units, MemoryBank& bank) override;
  const MemoryBank* prepare_for_question(Backbone& backbone, const QuestionInfo& question, MemoryBank& bank) override;

  // The data file flushed and closed, the live log ended; the log of every call so far.
  nlohmann::json finish();
  int64_t data_bytes() const { return data_.size(); }

 private:
  // One log entry: `event` with the blocks added since `first_block` and the encoder's position.
  void log(nlohmann::json event, const MemoryBank& bank, int64_t first_block);

  SnapshotDataWriter data_;
  LiveLogWriter live_;
  nlohmann::json events_ = nlohmann::json::array();
};

}  // namespace svqa
