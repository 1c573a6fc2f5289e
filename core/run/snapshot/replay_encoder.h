#pragma once
// An encoding strategy that encodes nothing: it replays a memory snapshot's log (snapshot_log.h)
// call for call, adding the logged blocks to the bank mapped from the snapshot's data file, and
// answers sinks(), next_position() and record fields as the encoder did at that point. Its
// constant choices (position policy, answer window, ...) are the configured strategy's.
// A call that is not the one logged next throws SnapshotDamaged (the key missed something the
// encoding depends on), as does a damaged snapshot: the runner then drops it and encodes.

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "core/engine/strategy.h"
#include "core/run/snapshot/snapshot_file.h"

namespace svqa {

class ReplayEncoder final : public EncodingStrategy {
 public:
  // `events`: the snapshot's log; `data_path`: its data file (opened now).
  ReplayEncoder(const EncodingStrategy& configured, nlohmann::json events, const std::string& data_path);

  void begin_stream(Backbone& backbone, const std::vector<int64_t>& sink_ids, MemoryBank& bank) override;
  void encode(Backbone& backbone, const std::vector<VisualUnit>& units, MemoryBank& bank) override;
  void before_question(Backbone& backbone, const QuestionInfo& question, MemoryBank& bank) override;

  const SinkKv& sinks() const override { return sinks_; }
  int64_t next_position() const override { return next_position_; }
  bool needs_visual_tokens() const override { return false; }  // nothing is encoded: no vision tower
  void add_record_fields(nlohmann::json& extra) const override { extra.update(fields_); }
  PositionPolicy position_policy() const override { return configured_.position_policy(); }
  bool blocks_tile_stream() const override { return configured_.blocks_tile_stream(); }
  int64_t answer_window() const override { return configured_.answer_window(); }

 private:
  // The next logged call, checked to be `call` with `matches`; its blocks added to `bank`.
  const nlohmann::json& replay(const std::string& call, const nlohmann::json& matches, MemoryBank& bank);

  const EncodingStrategy& configured_;
  nlohmann::json events_;
  size_t next_ = 0;
  SnapshotDataReader data_;
  SinkKv sinks_;
  int64_t next_position_ = 0;
  nlohmann::json fields_ = nlohmann::json::object();
};

}  // namespace svqa
