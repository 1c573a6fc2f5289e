#include "engine/snapshot/replay_encoder.h"

#include "engine/snapshot/snapshot_log.h"
#include "models/backbones/backbone.h"

namespace svqa {

ReplayEncoder::ReplayEncoder(std::unique_ptr<SnapshotEvents> events, const std::string& data_path, bool growing)
    : events_(std::move(events)), data_(data_path, growing) {}

ReplayEncoder::ReplayEncoder(std::unique_ptr<SnapshotEvents> events, std::shared_ptr<const HeldFile> data)
    : events_(std::move(events)), data_(std::move(data)) {}

const nlohmann::json& ReplayEncoder::replay(const std::string& call, const nlohmann::json& matches,
                                            const std::string& wanted, MemoryBank& bank) {
  auto mismatch = [&](const std::string& why) {
    return SnapshotDamaged(data_.path() + ": memory snapshot does not fit this run (call " + std::to_string(next_) +
                            ": " + why + ")");
  };
  const nlohmann::json* logged = events_->entry(next_, wanted);
  if (!logged) throw mismatch(call + " after the last logged call");
  const nlohmann::json& e = *logged;
  if (!e.is_object() || e.value("call", "") != call) throw mismatch(call + ", logged " + e.value("call", "?"));
  for (const auto& [key, value] : matches.items())
    if (!e.contains(key) || e[key] != value) throw mismatch(call + " with another " + key);
  try {
    add_logged_blocks(e.at("blocks"), data_, bank);
    next_position_ = e.at("next_position").get<int64_t>();
  } catch (const nlohmann::json::exception& x) {
    throw SnapshotDamaged(data_.path() + ": malformed memory snapshot: " + x.what());
  }
  ++next_;
  return e;
}

void ReplayEncoder::begin_stream(Backbone& backbone, const std::vector<int64_t>& sink_ids, MemoryBank& bank) {
  (void)sink_ids;
  const nlohmann::json& e = replay("begin_stream", nlohmann::json::object(), "the stream's start", bank);
  if (!e.contains("sinks")) throw SnapshotDamaged(data_.path() + ": malformed memory snapshot: no sinks");
  sinks_ = read_sinks(e["sinks"], data_, backbone.device());
  fields_ = nlohmann::json::object();
}

void ReplayEncoder::encode(Backbone& backbone, const std::vector<VisualUnit>& units, MemoryBank& bank) {
  (void)backbone;
  const int64_t first = units.empty() ? -1 : units.front().first_frame;
  const int64_t last = units.empty() ? -1 : units.back().last_frame;
  replay("encode", {{"first_frame", first}, {"last_frame", last}},
         "frames " + std::to_string(first) + "-" + std::to_string(last), bank);
}

const MemoryBank* ReplayEncoder::prepare_for_question(Backbone& backbone, const QuestionInfo& question,
                                                      MemoryBank& bank) {
  (void)backbone;
  const nlohmann::json& e = replay("before_question", {{"question", question.id}, {"time", question.time}},
                                   "question " + question.id, bank);
  fields_ = e.value("fields", nlohmann::json::object());
  return nullptr;  // a memory built at the question is never saved (validation refuses it)
}

}  // namespace svqa
