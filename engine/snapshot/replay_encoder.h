#pragma once
// An encoding strategy that encodes nothing: it replays a memory snapshot's log (snapshot_log.h)
// call for call, adding the logged blocks to the bank mapped from the snapshot's data file, and
// answers sinks(), next_position() and record fields as the encoder did at that point. What the
// encoder does to memory and how it is answered from are its registration's traits, which the run
// reads (engine/memory_contract.h): a replay has none to answer for.
// A call that is not the one logged next throws SnapshotDamaged (the key missed something the
// encoding depends on), as does a damaged snapshot: the runner then drops it and encodes.

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/strategy.h"
#include "engine/snapshot/snapshot_file.h"

namespace svqa {

// The log a replay reads, call by call: a finished snapshot's (FinishedLog) or one another process
// is still writing (followed_snapshot.h).
class SnapshotEvents {
 public:
  virtual ~SnapshotEvents() = default;
  // Entry `i` of the log (valid until the next call), or nullptr when the log ends before it.
  // `wanted` names the call the run is about to make: what a reader of a log being written waits for.
  virtual const nlohmann::json* entry(size_t i, const std::string& wanted) = 0;
};

// A replay reads each entry once, in order: the entries before the one asked for are dropped, so
// the parsed log does not stay resident for the whole stream.
class FinishedLog final : public SnapshotEvents {
 public:
  explicit FinishedLog(nlohmann::json events) : events_(std::move(events)) {}
  const nlohmann::json* entry(size_t i, const std::string&) override {
    if (!events_.is_array() || i >= events_.size()) return nullptr;
    if (i > 0) events_[i - 1] = nullptr;
    return &events_[i];
  }

 private:
  nlohmann::json events_;
};

class ReplayEncoder final : public EncodingStrategy {
 public:
  // `events`: the snapshot's log; `data_path`: its data file (opened now), `growing` while it is
  // still being written.
  ReplayEncoder(std::unique_ptr<SnapshotEvents> events, const std::string& data_path, bool growing = false);
  // `data`: the snapshot's data file, opened already (MemoryCache::find).
  ReplayEncoder(std::unique_ptr<SnapshotEvents> events, std::shared_ptr<const HeldFile> data);

  void begin_stream(Backbone& backbone, const std::vector<int64_t>& sink_ids, MemoryBank& bank) override;
  void encode(Backbone& backbone, const std::vector<VisualUnit>& units, MemoryBank& bank) override;
  const MemoryBank* prepare_for_question(Backbone& backbone, const QuestionInfo& question, MemoryBank& bank) override;

  const SinkKv& sinks() const override { return sinks_; }
  int64_t next_position() const override { return next_position_; }
  void add_record_fields(nlohmann::json& extra) const override { extra.update(fields_); }

 private:
  // The next logged call, checked to be `call` with `matches` (`wanted` describes it); its blocks
  // added to `bank`.
  const nlohmann::json& replay(const std::string& call, const nlohmann::json& matches, const std::string& wanted,
                               MemoryBank& bank);

  std::unique_ptr<SnapshotEvents> events_;
  size_t next_ = 0;
  SnapshotDataReader data_;
  SinkKv sinks_;
  int64_t next_position_ = 0;
  nlohmann::json fields_ = nlohmann::json::object();
};

}  // namespace svqa
